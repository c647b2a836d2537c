// Keep-alive: refresh the grants of idle installs before their refresh token dies.
//
// A refresh token lives 30 days (contract §8) and is renewed only by using it. An install nobody
// opens for a month would otherwise lose its token chain and need a re-install. So every grant of an
// active or flagged install whose refresh token expires within the horizon is refreshed (a refresh is
// a token-endpoint call, not an API call, so it spends none of the install's API budget and does not
// break the NEEDS_REAUTH rule).
//
// Two plain functions, run by the job engine (lib/jobs/engine.ts) but testable without it:
//   - findGrantsDueForKeepAlive: the fan-out's query, on the index of refresh_token_expires_at;
//   - keepInstallAlive: one install's refresh. Safe to run twice, or after someone else refreshed:
//     it re-reads the grant and does nothing when it is no longer due, and the refresh coordinator
//     (lib/oauth/refresh.ts) re-reads it again under the install's lock.
// Cadence and horizon, and why they keep every grant alive: lib/jobs/kinds.ts (JOB_KINDS).
import "server-only";
import { db } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import { logger } from "@/lib/log";
import { NoUsableTokenError } from "@/lib/oauth/errors";
import { refreshInstallTokens } from "@/lib/oauth/refresh";

/** Refresh grants whose refresh token would expire within this window: a week to notice trouble. */
export const KEEP_ALIVE_HORIZON_MS = 7 * 24 * 60 * 60 * 1000;

/** What one install's keep-alive did. A failure that may pass (the identity provider away) throws instead, to be retried. */
export type KeepAliveOutcome = "refreshed" | "not_due" | "need_reinstall" | "skipped";

/**
 * The installs whose grant is due, oldest expiry first. Indexed (token_grants_refresh_token_expires_at_idx),
 * so the query reads only the due rows, however many installs there are (tests/integration/jobs.test.ts
 * EXPLAINs it).
 */
export async function findGrantsDueForKeepAlive(now = new Date()): Promise<string[]> {
  const rows = await db().$queryRaw<{ install_row_id: string }[]>(keepAliveDueQuery(now));
  return rows.map((row) => row.install_row_id);
}

/** The query itself, apart, so that a test can EXPLAIN exactly it. */
export function keepAliveDueQuery(now: Date): Prisma.Sql {
  return Prisma.sql`
    SELECT g.install_row_id
    FROM token_grants g
    JOIN installs i ON i.id = g.install_row_id
    WHERE g.refresh_token_encrypted IS NOT NULL
      AND g.refresh_token_expires_at < ${new Date(now.getTime() + KEEP_ALIVE_HORIZON_MS)}
      -- A flagged install's chain is kept alive while it waits for the operator's re-consent.
      AND i.status IN ('ACTIVE', 'NEEDS_REAUTH')
    ORDER BY g.refresh_token_expires_at`;
}

/** Refreshes the install's grant if it is still due. Throws when the refresh could not be done now (retried). */
export async function keepInstallAlive(installRowId: string, now = new Date()): Promise<KeepAliveOutcome> {
  const [grant] = await db().$queryRaw<{ version: number; due: boolean; live: boolean }[]>`
    SELECT g.version,
           g.refresh_token_expires_at < ${new Date(now.getTime() + KEEP_ALIVE_HORIZON_MS)} AS due,
           i.status IN ('ACTIVE', 'NEEDS_REAUTH') AS live
    FROM token_grants g JOIN installs i ON i.id = g.install_row_id
    WHERE g.install_row_id = ${installRowId}::uuid AND g.refresh_token_encrypted IS NOT NULL`;
  // Uninstalled, gone or refreshed since the fan-out found it: nothing to do, and nothing to retry.
  if (!grant || !grant.live) return "skipped";
  if (!grant.due) return "not_due";
  try {
    await refreshInstallTokens(installRowId, grant.version);
    return "refreshed";
  } catch (error) {
    // contract §7: the chain is gone; only the operator can help (the install says so). Final.
    if (error instanceof NoUsableTokenError) {
      logger.warn({ installRowId, reason: error.reason }, "keep-alive: the install needs a re-install");
      return "need_reinstall";
    }
    // The identity provider away, a refresh still settling, the circuit open: the job is retried.
    throw error;
  }
}
