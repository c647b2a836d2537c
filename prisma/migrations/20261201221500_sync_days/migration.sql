-- History of what happened, not of every quiet run (lib/sync/history.ts): a run that changed nothing and
-- ended as the one before deletes its sync_runs row and is counted in its install's, resource's and
-- day's row here. Rows already in sync_runs stay until the purge's window passes them.
-- CreateTable
CREATE TABLE "sync_days" (
    "id" UUID NOT NULL,
    "install_row_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "resource" TEXT NOT NULL,
    "runs" INTEGER NOT NULL DEFAULT 0,
    "quiet_runs" INTEGER NOT NULL DEFAULT 0,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "records_changed" INTEGER NOT NULL DEFAULT 0,
    "last_quiet_at" TIMESTAMPTZ(3),

    CONSTRAINT "sync_days_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "sync_days_install_row_id_day_resource_key" ON "sync_days"("install_row_id", "day", "resource");

-- CreateIndex
CREATE INDEX "sync_days_day_id_idx" ON "sync_days"("day", "id");

-- AddForeignKey
ALTER TABLE "sync_days" ADD CONSTRAINT "sync_days_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
