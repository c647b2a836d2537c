// Each install's latest finished run per synced resource (the sync_latest table): what the staff
// console's "sync failing" filter and its counts read (lib/admin/install-list.ts), so they never read
// the runs' history in sync_runs, however many runs it keeps or however few a purge leaves.
//
// Written by recordLatestOutcome in the transaction that ends the run (engine.ts): the run's
// sync_runs row and its resource's latest outcome commit together or not at all, so the console can
// never show a sync as failing that the run history records as recovered, or the other way round.
// Keyed by the resource's name, so any resource of the registry (./resources.ts) has its row, a
// fork's own included, with nothing to declare.
//
// The same transaction then refreshes the install's sync summary on its installs row (synced_at,
// synced_once, sync_failing; refreshSyncSummary), derived from sync_checkpoints and sync_latest, so
// every console sync filter and the "last sync" sort read an index of installs, a page's rows only,
// however many installs there are. The checkpoint's pass end commits just before (engine.ts), so the
// summary is exact as of each run's end.
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
  await refreshSyncSummary(tx, [run.installRowId]);
}

/**
 * The installs' sync summary, recomputed from their checkpoints and latest outcomes (definitions at
 * lib/admin/install-list.ts, SYNC_HEALTHS): the whole copy complete as of (the oldest resource's last
 * pass end, null while some resource has none), whether any pass ever ended, and whether the latest
 * sync failed. Writes only what changed: one sync's resources share one start, so the row is written
 * about once per sync, when its last resource ends, not once per resource. The migration
 * 20261201220000_install_sync_summary backfilled with this statement; fixtures that write the sync's
 * tables directly call it too.
 */
export async function refreshSyncSummary(tx: Pick<Tx, "$executeRaw">, installRowIds: string[]): Promise<void> {
  await tx.$executeRaw`
    UPDATE installs i SET synced_at = s.synced_at, synced_once = s.synced_once, sync_failing = s.failing
    FROM (
      SELECT x.id,
        (SELECT CASE WHEN bool_and(c.last_pass_ended_at IS NOT NULL) THEN min(c.last_pass_ended_at) END FROM sync_checkpoints c WHERE c.install_row_id = x.id) AS synced_at,
        EXISTS (SELECT 1 FROM sync_checkpoints c WHERE c.install_row_id = x.id AND c.last_pass_ended_at IS NOT NULL) AS synced_once,
        EXISTS (SELECT 1 FROM sync_latest f WHERE f.install_row_id = x.id AND f.outcome = 'failed'
                AND f.started_at = (SELECT max(l.started_at) FROM sync_latest l WHERE l.install_row_id = x.id)) AS failing
      FROM unnest(${installRowIds}::uuid[]) AS x(id)
    ) s
    WHERE i.id = s.id AND (i.synced_at, i.synced_once, i.sync_failing) IS DISTINCT FROM (s.synced_at, s.synced_once, s.failing)`;
}
