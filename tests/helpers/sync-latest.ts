// Fixtures that write sync_runs rows straight into the database, as lib/sync would have left them,
// must also write what the sync writes in the same transaction as each run's end: the resource's
// latest outcome in sync_latest (lib/sync/latest.ts), which the console's sync health reads.
// recordLatestFromRuns does that from the rows written, with the statement the migration
// prisma/migrations/20261127020000_sync_latest backfills with (the latest ended run per install and
// resource), never moving a row back to an older run. Then, as the same transaction does, the
// installs' sync summary (refreshSyncSummaries).
import { sql } from "./stack";

export async function recordLatestFromRuns(installRowIds?: string[]): Promise<void> {
  await sql(
    `INSERT INTO sync_latest AS l (install_row_id, resource, started_at, finished_at, outcome, error_kind)
     SELECT DISTINCT ON (install_row_id, resource) install_row_id, resource, started_at, finished_at, outcome, error_kind
     FROM sync_runs
     WHERE outcome <> 'running' AND ($1::uuid[] IS NULL OR install_row_id = ANY($1::uuid[]))
     ORDER BY install_row_id, resource, started_at DESC, finished_at DESC NULLS LAST, id
     ON CONFLICT (install_row_id, resource) DO UPDATE SET
       started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at, outcome = EXCLUDED.outcome, error_kind = EXCLUDED.error_kind
     WHERE l.started_at <= EXCLUDED.started_at`,
    [installRowIds ?? null],
  );
  await refreshSyncSummaries(installRowIds);
}

/**
 * The installs' sync summary (installs.synced_at, synced_once, sync_failing) from the checkpoints and
 * latest outcomes written, all installs' when no ids are given: the statement of lib/sync/latest.ts
 * (refreshSyncSummary), which a fixture outside Next.js's server bundle cannot import.
 */
export async function refreshSyncSummaries(installRowIds?: string[]): Promise<void> {
  await sql(
    `UPDATE installs i SET synced_at = s.synced_at, synced_once = s.synced_once, sync_failing = s.failing
     FROM (
       SELECT x.id,
         (SELECT CASE WHEN bool_and(c.last_pass_ended_at IS NOT NULL) THEN min(c.last_pass_ended_at) END FROM sync_checkpoints c WHERE c.install_row_id = x.id) AS synced_at,
         EXISTS (SELECT 1 FROM sync_checkpoints c WHERE c.install_row_id = x.id AND c.last_pass_ended_at IS NOT NULL) AS synced_once,
         EXISTS (SELECT 1 FROM sync_latest f WHERE f.install_row_id = x.id AND f.outcome = 'failed'
                 AND f.started_at = (SELECT max(l.started_at) FROM sync_latest l WHERE l.install_row_id = x.id)) AS failing
       FROM installs x WHERE $1::uuid[] IS NULL OR x.id = ANY($1::uuid[])
     ) s
     WHERE i.id = s.id AND (i.synced_at, i.synced_once, i.sync_failing) IS DISTINCT FROM (s.synced_at, s.synced_once, s.failing)`,
    [installRowIds ?? null],
  );
}
