-- The staff console's sync health and its "last sync" sort, kept on the install row (lib/sync/latest.ts
-- writes them in the transaction that ends each run, with sync_latest), so every sync filter and the
-- sort read an index of installs for a page's rows instead of each install's checkpoints and latest
-- outcomes (lib/admin/install-list.ts; at 10,000 installs the sort read all 30,000 checkpoints per page).
ALTER TABLE "installs" ADD COLUMN "synced_at" TIMESTAMPTZ(3),
    ADD COLUMN "synced_once" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "sync_failing" BOOLEAN NOT NULL DEFAULT false;

-- "Sort by last sync" (never synced, then incomplete copies, then oldest complete copy first) and the
-- "lagging"/"up to date" filters (a range of it). NULLS FIRST, which Prisma's schema language cannot
-- express (tests/integration/db/schema-drift.test.ts lists it as made on purpose).
CREATE INDEX "installs_sync_order_idx" ON "installs"("synced_once", "synced_at" NULLS FIRST, "id");

-- "Sync failing": the failing installs only (about 1 in 100), newest first. A partial index, which
-- Prisma's schema language cannot express. It replaces sync_latest's partial index of failed rows,
-- which nothing reads any more.
CREATE INDEX "installs_sync_failing_idx" ON "installs"("created_at", "id") WHERE "sync_failing";
DROP INDEX "sync_latest_failed_idx";

-- Backfill, with the statement lib/sync/latest.ts (refreshSyncSummary) runs at each run's end.
UPDATE "installs" i SET "synced_at" = s."synced_at", "synced_once" = s."synced_once", "sync_failing" = s."failing"
FROM (
  SELECT x."id",
    (SELECT CASE WHEN bool_and(c."last_pass_ended_at" IS NOT NULL) THEN min(c."last_pass_ended_at") END FROM "sync_checkpoints" c WHERE c."install_row_id" = x."id") AS "synced_at",
    EXISTS (SELECT 1 FROM "sync_checkpoints" c WHERE c."install_row_id" = x."id" AND c."last_pass_ended_at" IS NOT NULL) AS "synced_once",
    EXISTS (SELECT 1 FROM "sync_latest" f WHERE f."install_row_id" = x."id" AND f."outcome" = 'failed'
            AND f."started_at" = (SELECT max(l."started_at") FROM "sync_latest" l WHERE l."install_row_id" = x."id")) AS "failing"
  FROM "installs" x
) s
WHERE i."id" = s."id";
