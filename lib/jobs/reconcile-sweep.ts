// The reconcile sweep: checks every active install against the API, so a webhook that never
// arrived (contract §6: best effort, no retry) is caught by the next sweep. One instance at a time;
// one call per install per sweep, far inside each install's budget (contract §8: 1,000 requests
// per 60 s per install), and installs checked recently (e.g. by a dashboard visit) are skipped.
// Flagged installs (NEEDS_REAUTH) are not reconciled; they get the sparse re-authorization probe
// instead (lib/installs/reauth.ts), so one re-consented outside the app does not stay stopped.
import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";
import { REAUTH_SWEEP_PROBE_INTERVAL_MS, probeReauthorization, type ReauthProbeOutcome } from "@/lib/installs/reauth";
import { reconcileInstall, type ReconcileOutcome } from "@/lib/installs/reconcile";
import { shutdownSignal } from "@/lib/shutdown";
import { runExclusively, type ExclusiveRun, type JobOptions } from "./exclusive";

/** An install checked more recently than this is not checked again by the sweep. */
export const SWEEP_MIN_INTERVAL_MS = 10 * 60 * 1000;
const BATCH = 500;

export type SweepSummary = { checked: number } & Record<ReconcileOutcome, number> & {
  /** Flagged installs probed for a re-consent, by outcome (not_due: another instance got there first). */
  reauthProbes: Record<ReauthProbeOutcome, number>;
  /** The process began stopping during the sweep; any install not reached waits for the next one. */
  stoppedEarly: boolean;
};

export function runReconcileSweep({ now = new Date(), signal = shutdownSignal() }: JobOptions = {}): Promise<ExclusiveRun<SweepSummary>> {
  return runExclusively("reconcile-sweep", 15 * 60 * 1000, async () => {
    const due = await db().install.findMany({
      where: {
        status: "ACTIVE",
        grant: { isNot: null },
        OR: [{ lastReconciledAt: null }, { lastReconciledAt: { lt: new Date(now.getTime() - SWEEP_MIN_INTERVAL_MS) } }],
      },
      select: { id: true },
      orderBy: { lastReconciledAt: { sort: "asc", nulls: "first" } },
      take: BATCH,
    });
    const summary: SweepSummary = {
      checked: due.length,
      live: 0,
      flagged: 0,
      unusable: 0,
      unavailable: 0,
      skipped: 0,
      reauthProbes: { cleared: 0, still_flagged: 0, not_due: 0, unavailable: 0 },
      stoppedEarly: false,
    };
    // The process may be asked to stop while the sweep runs: it stops between installs, so the one
    // being checked (which may be refreshing its token) finishes first.
    for (const install of due) {
      if (signal.aborted) break;
      try {
        summary[await reconcileInstall(install.id)] += 1;
      } catch (error) {
        summary.unavailable += 1;
        logger.warn({ installRowId: install.id, err: error }, "reconcile failed");
      }
    }
    const probeCutoff = new Date(now.getTime() - REAUTH_SWEEP_PROBE_INTERVAL_MS);
    const flagged = signal.aborted ? [] : await db().install.findMany({
      where: { status: "NEEDS_REAUTH", grant: { isNot: null }, OR: [{ lastReconciledAt: null }, { lastReconciledAt: { lt: probeCutoff } }] },
      select: { id: true },
      orderBy: { lastReconciledAt: { sort: "asc", nulls: "first" } },
      take: BATCH,
    });
    for (const install of flagged) {
      if (signal.aborted) break;
      try {
        summary.reauthProbes[await probeReauthorization(install.id, "reconcile", { minIntervalMs: REAUTH_SWEEP_PROBE_INTERVAL_MS })] += 1;
      } catch (error) {
        summary.reauthProbes.unavailable += 1;
        logger.warn({ installRowId: install.id, err: error }, "re-authorization probe failed");
      }
    }
    summary.stoppedEarly = signal.aborted;
    logger.info(summary, "reconcile sweep finished");
    return summary;
  });
}
