-- Each install's latest finished run per synced resource (lib/sync/latest.ts), so the staff console's
-- "sync failing" filter and its counts read one small table through one index instead of each
-- install's run history in sync_runs (lib/admin/install-list.ts).
-- CreateTable
CREATE TABLE "sync_latest" (
    "install_row_id" UUID NOT NULL,
    "resource" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "outcome" TEXT NOT NULL,
    "error_kind" TEXT,

    CONSTRAINT "sync_latest_pkey" PRIMARY KEY ("install_row_id","resource")
);

-- AddForeignKey
ALTER TABLE "sync_latest" ADD CONSTRAINT "sync_latest_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The failed rows only (about 1 in 100 at a healthy fleet), keyed by install and start: "installs whose
-- latest sync failed" is read from these rows, each checked against its install's few other rows
-- through the primary key. A partial index, which Prisma's schema language cannot express
-- (tests/integration/db/schema-drift.test.ts lists it as made on purpose).
CREATE INDEX "sync_latest_failed_idx" ON "sync_latest"("install_row_id", "started_at") WHERE "outcome" = 'failed';

-- Backfill from the history: per install and resource, the latest run that ended ("running" ones have
-- no outcome yet; a run left "running" by a process that died never gets one). One read of sync_runs,
-- once; from now on the sync writes each row when its run ends.
INSERT INTO "sync_latest" ("install_row_id", "resource", "started_at", "finished_at", "outcome", "error_kind")
SELECT DISTINCT ON ("install_row_id", "resource") "install_row_id", "resource", "started_at", "finished_at", "outcome", "error_kind"
FROM "sync_runs"
WHERE "outcome" <> 'running'
ORDER BY "install_row_id", "resource", "started_at" DESC, "finished_at" DESC NULLS LAST, "id";
