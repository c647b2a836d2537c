// Keep-alive: refresh the grants of idle installs before their refresh token dies.
//
// A refresh token lives 30 days (contract §8) and is renewed only by using it. An install nobody
// opens for a month would otherwise lose its token chain and need a re-install. This job refreshes
// every grant of an active or flagged install whose refresh token expires within the horizon (a
// refresh is a token-endpoint call, not an API call, so it does not break the NEEDS_REAUTH rule). It runs on one instance at a
// time (lib/jobs/exclusive.ts), and each refresh goes through the refresh coordinator, which
// re-reads the grant under the install's lock: a grant refreshed meanwhile is not refreshed again.
import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";
import { NoUsableTokenError } from "@/lib/oauth/errors";
import { refreshInstallTokens } from "@/lib/oauth/refresh";
import { shutdownSignal } from "@/lib/shutdown";
import { runExclusively, type ExclusiveRun, type JobOptions } from "./exclusive";

/** Refresh grants whose refresh token would expire within this window: a week to notice trouble. */
export const KEEP_ALIVE_HORIZON_MS = 7 * 24 * 60 * 60 * 1000;
const BATCH = 100;
/** Stop starting refreshes after this long, well inside the job lock's lifetime; the rest wait for the next run. */
const RUN_BUDGET_MS = 5 * 60 * 1000;

export type KeepAliveSummary = {
  due: number;
  refreshed: number;
  needReinstall: number;
  failed: number;
  /** The process began stopping (or the run's time was up): the grants not reached wait for the next run. */
  stoppedEarly: boolean;
};

export function runKeepAlive({ now = new Date(), signal = shutdownSignal() }: JobOptions = {}): Promise<ExclusiveRun<KeepAliveSummary>> {
  return runExclusively("keep-alive", 10 * 60 * 1000, async () => {
    const due = await db().tokenGrant.findMany({
      where: {
        refreshTokenExpiresAt: { lt: new Date(now.getTime() + KEEP_ALIVE_HORIZON_MS) },
        refreshTokenEncrypted: { not: null },
        // A flagged install's chain is kept alive while it waits for the operator's re-consent.
        install: { status: { in: ["ACTIVE", "NEEDS_REAUTH"] } },
      },
      select: { installRowId: true, version: true },
      // Grants with an unsettled refresh last: they may only be retried later, and must not starve the others.
      orderBy: [{ refreshStartedAt: { sort: "asc", nulls: "first" } }, { refreshTokenExpiresAt: "asc" }],
      take: BATCH,
    });
    const summary: KeepAliveSummary = { due: due.length, refreshed: 0, needReinstall: 0, failed: 0, stoppedEarly: false };
    // One at a time: a batch of refreshes should not look like a stampede to the identity provider.
    const stopAt = Date.now() + RUN_BUDGET_MS;
    for (const grant of due) {
      // Between two refreshes, never during one: a refresh once started runs to its end, so its
      // outcome is known and stored (lib/oauth/refresh.ts); the next one waits for the next run.
      if (signal.aborted || Date.now() > stopAt) {
        summary.stoppedEarly = true;
        break;
      }
      try {
        await refreshInstallTokens(grant.installRowId, grant.version);
        summary.refreshed += 1;
      } catch (error) {
        if (error instanceof NoUsableTokenError) summary.needReinstall += 1;
        else summary.failed += 1;
        logger.warn({ installRowId: grant.installRowId, err: error }, "keep-alive refresh did not succeed");
      }
    }
    logger.info(summary, "keep-alive run finished");
    return summary;
  });
}
