// Fixtures that write sync_runs rows straight into the database, as lib/sync would have left them,
// must also write what the sync writes in the same transaction as each run's end: the resource's
// latest outcome in sync_latest (lib/sync/latest.ts), which the console's sync health reads.
// recordLatestFromRuns does that from the rows written, with the statement the migration
// prisma/migrations/20261127020000_sync_latest backfills with (the latest ended run per install and
// resource), never moving a row back to an older run.
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
}
