-- Retention of the app's own history (docs/data-retention.md, lib/retention/rules.ts).
--
-- The purge deletes in batches found by walking a time index oldest first (lib/retention/purge.ts).
-- webhook_deliveries (received_at, id) and staff_actions (requested_at, id) have one already; the
-- tables below did not.
--
-- On a database with millions of sync runs, building the index blocks the sync's writes to sync_runs
-- for the seconds it takes (each migration is one transaction, so it cannot be CONCURRENTLY). To
-- avoid even that, create the indexes by hand first with CREATE INDEX CONCURRENTLY and these
-- names: IF NOT EXISTS then makes this migration skip them.

-- CreateIndex
CREATE INDEX IF NOT EXISTS "sync_runs_started_at_id_idx" ON "sync_runs"("started_at", "id");

-- CreateIndex
CREATE INDEX IF NOT EXISTS "install_events_occurred_at_id_idx" ON "install_events"("occurred_at", "id");

-- The refresh history and the alert digests were created with an index on their time alone; the walk
-- orders by (time, id), so the id joins it (the new index serves every query the old one did).
-- DropIndex
DROP INDEX IF EXISTS "refresh_attempts_attempted_at_idx";

-- CreateIndex
CREATE INDEX IF NOT EXISTS "refresh_attempts_attempted_at_id_idx" ON "refresh_attempts"("attempted_at", "id");

-- DropIndex
DROP INDEX IF EXISTS "alert_digests_last_alert_at_idx";

-- CreateIndex
CREATE INDEX IF NOT EXISTS "alert_digests_last_alert_at_id_idx" ON "alert_digests"("last_alert_at", "id");

-- CreateTable
CREATE TABLE "retention_purges" (
    "table_name" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,
    "cutoff" TIMESTAMPTZ(3) NOT NULL,
    "deleted_rows" INTEGER NOT NULL,
    "batches" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,

    CONSTRAINT "retention_purges_pkey" PRIMARY KEY ("table_name")
);

-- The purge deletes an hour's rows every hour; autovacuum makes their space reusable. By default it
-- waits for dead rows to reach 20% of a table, which on sync_runs is about three days of purged rows
-- (the table would swell by that much before settling). At 2% it follows the purge within hours.
ALTER TABLE "sync_runs" SET (autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE "webhook_deliveries" SET (autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE "refresh_attempts" SET (autovacuum_vacuum_scale_factor = 0.02);
