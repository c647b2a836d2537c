// Each install's latest finished run per synced resource (the sync_latest table): what the staff
// console's "sync failing" filter and its counts read (lib/admin/install-list.ts), so they never read
// the runs' history in sync_runs, however many runs it keeps or however few a purge leaves.
//
// Written by recordLatestOutcome in the transaction that ends the run (engine.ts): the run's
// sync_runs row and its resource's latest outcome commit together or not at all, so the console can
// never show a sync as failing that the run history records as recovered, or the other way round.
// Keyed by the resource's name, so any resource of the registry (./resources.ts) has its row, a
// fork's own included, with nothing to declare.
import "server-only";
import type { Tx } from "@/lib/db/client";

export type EndedRun = {
  installRowId: string;
  resource: string;
  /** The run's sync_runs.started_at: one sync's runs share it (index.ts passes one `now` to all). */
  startedAt: Date;
  finishedAt: Date;
  /** The run's outcome (engine.ts, ResourceOutcome): completed | stopped | skipped | failed. */
  outcome: string;
  errorKind: string | null;
};

/**
 * Upserts the resource's latest outcome. A run that started before the one already recorded (a slow
 * run that ended after a later one, should two ever overlap) does not overwrite it: latest by start,
 * as the console defines "the latest sync" (lib/admin/install-list.ts, SYNC_HEALTHS).
 */
export async function recordLatestOutcome(tx: Tx, run: EndedRun): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO sync_latest AS l (install_row_id, resource, started_at, finished_at, outcome, error_kind)
    VALUES (${run.installRowId}::uuid, ${run.resource}, ${run.startedAt}, ${run.finishedAt}, ${run.outcome}, ${run.errorKind})
    ON CONFLICT (install_row_id, resource) DO UPDATE SET
      started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at, outcome = EXCLUDED.outcome, error_kind = EXCLUDED.error_kind
    WHERE l.started_at <= EXCLUDED.started_at`;
}
