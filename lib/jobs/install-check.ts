// The install check: one install against the API, for the reconcile sweep and for webhook follow-ups.
//
// The sweep exists because webhooks are best effort and never retried (contract §6): a lost
// install.revoked is caught by the next check (as REINSTALL_NEEDED: docs/spec-gaps.md A209). Flagged installs (NEEDS_REAUTH) are not reconciled;
// they get the sparse re-authorization probe instead (lib/installs/reauth.ts), so one re-consented
// outside the app does not stay stopped. Each check is one `GET /consumers/me` paid from the
// install's background share of its budget (contract §8; lib/partner-api/budget.ts).
//
// Two plain functions, run by the job engine (lib/jobs/engine.ts) but testable without it:
//   - findInstallsDueForCheck: the sweep's fan-out query, on installs_status_last_reconciled_at_idx;
//   - checkInstall: one install. Safe to run twice: reconciling is idempotent, and the probe claims
//     its own interval. "unavailable" throws, so that the engine retries it with backoff.
// Cadence, and why it serves 10,000 installs: lib/jobs/kinds.ts (JOB_KINDS).
import "server-only";
import { db } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import { REAUTH_SWEEP_PROBE_INTERVAL_MS, probeReauthorization, type ReauthProbeOutcome } from "@/lib/installs/reauth";
import { reconcileInstall, type ReconcileOutcome } from "@/lib/installs/reconcile";

/** An install checked more recently than this is not checked again by the sweep. */
export const SWEEP_MIN_INTERVAL_MS = 10 * 60 * 1000;

export type InstallCheckOutcome = Exclude<ReconcileOutcome, "unavailable"> | `reauth_${Exclude<ReauthProbeOutcome, "unavailable">}`;

/** The check could not reach a verdict now (the API or the identity provider away): retried by the engine. */
export class InstallCheckUnavailableError extends Error {
  constructor(installRowId: string) {
    super(`install ${installRowId} could not be checked now`);
    this.name = "InstallCheckUnavailableError";
  }
}

/**
 * Active installs not checked for SWEEP_MIN_INTERVAL_MS, and flagged ones not probed for
 * REAUTH_SWEEP_PROBE_INTERVAL_MS, least recently checked first. Indexed: installs_status_last_reconciled_at_idx
 * serves both conditions (tests/integration/jobs.test.ts EXPLAINs it).
 */
export async function findInstallsDueForCheck(now = new Date()): Promise<string[]> {
  const rows = await db().$queryRaw<{ id: string }[]>(installCheckDueQuery(now));
  return rows.map((row) => row.id);
}

/** The query itself, apart, so that a test can EXPLAIN exactly it. */
export function installCheckDueQuery(now: Date): Prisma.Sql {
  const sweepCutoff = new Date(now.getTime() - SWEEP_MIN_INTERVAL_MS);
  const probeCutoff = new Date(now.getTime() - REAUTH_SWEEP_PROBE_INTERVAL_MS);
  return Prisma.sql`
    SELECT i.id FROM installs i
    WHERE ((i.status = 'ACTIVE' AND (i.last_reconciled_at IS NULL OR i.last_reconciled_at < ${sweepCutoff}))
        OR (i.status = 'NEEDS_REAUTH' AND (i.last_reconciled_at IS NULL OR i.last_reconciled_at < ${probeCutoff})))
      AND EXISTS (SELECT FROM token_grants g WHERE g.install_row_id = i.id)
    ORDER BY i.last_reconciled_at NULLS FIRST`;
}

/** Checks one install by its state now (it may have changed since it was enqueued). */
export async function checkInstall(installRowId: string): Promise<InstallCheckOutcome> {
  const install = await db().install.findUnique({ where: { id: installRowId }, select: { status: true } });
  if (install?.status === "NEEDS_REAUTH") {
    const outcome = await probeReauthorization(installRowId, "reconcile", { minIntervalMs: REAUTH_SWEEP_PROBE_INTERVAL_MS });
    if (outcome === "unavailable") throw new InstallCheckUnavailableError(installRowId);
    return `reauth_${outcome}`;
  }
  // Anything but ACTIVE (gone, revoked, re-install needed) is skipped by reconcileInstall itself.
  const outcome = await reconcileInstall(installRowId, "background");
  if (outcome === "unavailable") throw new InstallCheckUnavailableError(installRowId);
  return outcome;
}
