// The sync and retention as scheduled jobs (issue 12): what the job engine needs from lib/sync.
//
//   findInstallsDueForSync / syncInstallJob       the sync of each active install, every
//                                                 SYNC_INTERVAL_MINUTES, and once right after its
//                                                 callback (lib/installs/connect.ts)
//   findInstallsDueForPurge / purgeInstallJob     retention: a revoked or lost install's synced data, once
//                                                 SYNC_RETENTION_DAYS have passed (lib/sync/retention.ts)
//
// Plain functions, run by lib/jobs/engine.ts and testable without it. The engine's per-install
// queues are keyed by install, so two workers never sync (or purge) one install at once.
import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { syncInstall } from "@/lib/sync";
import { findInstallsDueForPurge, purgeInstallData } from "@/lib/sync/retention";

export class SyncFailedError extends Error {
  constructor(installRowId: string, reason: string | null) {
    super(`the sync of install ${installRowId} failed (${reason ?? "unknown"}); it resumes from its checkpoint when retried`);
    this.name = "SyncFailedError";
  }
}

/**
 * Active installs with no sync run started within SYNC_INTERVAL_MINUTES: ended (sync_latest; a quiet
 * run keeps no sync_runs row, lib/sync/history.ts), or under way (its checkpoint, stamped with the
 * run's start at each page, or its "running" row). Through installs_status_last_reconciled_at_idx
 * (status) and the three tables' keys on the install.
 *
 * A run counts only within one interval either side of now. Runs are stamped by the clock of the
 * process that ran them: one whose clock ran two hours ahead left runs "in the future", which, once
 * its clock came back, kept the install "recently synced" for those two hours (issue 34). A run
 * stamped further ahead than one interval cannot be recent, so it no longer holds the install back;
 * a few seconds between two machines' clocks still count as the run they are.
 */
export async function findInstallsDueForSync(now = new Date()): Promise<string[]> {
  const intervalMs = env().SYNC_INTERVAL_MINUTES * 60_000;
  const cutoff = new Date(now.getTime() - intervalMs);
  const ahead = new Date(now.getTime() + intervalMs);
  const rows = await db().$queryRaw<{ id: string }[]>`
    SELECT i.id FROM installs i
    WHERE i.status = 'ACTIVE'
      AND NOT EXISTS (SELECT 1 FROM sync_latest l WHERE l.install_row_id = i.id AND l.started_at > ${cutoff} AND l.started_at <= ${ahead})
      AND NOT EXISTS (SELECT 1 FROM sync_checkpoints c WHERE c.install_row_id = i.id AND c.updated_at > ${cutoff} AND c.updated_at <= ${ahead})
      AND NOT EXISTS (SELECT 1 FROM sync_runs r WHERE r.install_row_id = i.id AND r.started_at > ${cutoff} AND r.started_at <= ${ahead})`;
  return rows.map((row) => row.id);
}

/**
 * One install's sync. "stopped" (a 429 it could not wait out, NEEDS_REAUTH, an uninstall, the
 * process stopping) is an outcome, not a failure: the checkpoint is kept and the next scheduled run
 * resumes. "failed" throws, so the engine retries it with backoff.
 */
export async function syncInstallJob(installRowId: string): Promise<string> {
  const summary = await syncInstall(installRowId);
  if (summary.outcome === "failed") throw new SyncFailedError(installRowId, summary.reason);
  return summary.reason ? `${summary.outcome}:${summary.reason}` : summary.outcome;
}

export { findInstallsDueForPurge };

/** Retention for one install: "purged", or "more" when its batches ran out (the next run goes on). */
export async function purgeInstallJob(installRowId: string): Promise<string> {
  const { stoppedEarly } = await purgeInstallData(installRowId);
  return stoppedEarly ? "more" : "purged";
}
