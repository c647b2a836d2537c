-- CreateTable
CREATE TABLE "synced_charge_points" (
    "install_row_id" UUID NOT NULL,
    "external_id" TEXT NOT NULL,
    "name" TEXT,
    "state" TEXT,
    "type" TEXT,
    "site_id" TEXT,
    "team_id" TEXT,
    "serial_number" TEXT,
    "evse_id" TEXT,
    "max_kw" DECIMAL(10,3),
    "is_active" BOOLEAN,
    "address_label" TEXT,
    "city" TEXT,
    "country" TEXT,
    "latitude" DOUBLE PRECISION,
    "longitude" DOUBLE PRECISION,
    "connectors" JSONB,
    "raw" JSONB NOT NULL,
    "seen_pass_id" UUID,
    "seen_page" INTEGER,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "synced_charge_points_pkey" PRIMARY KEY ("install_row_id","external_id")
);

-- CreateTable
CREATE TABLE "synced_charges" (
    "install_row_id" UUID NOT NULL,
    "external_id" TEXT NOT NULL,
    "charge_point_id" TEXT,
    "site_id" TEXT,
    "state" TEXT,
    "type" TEXT,
    "consumed_kwh" DECIMAL(14,3),
    "started_at" TIMESTAMPTZ(3),
    "stopped_at" TIMESTAMPTZ(3),
    "price" DECIMAL(19,4),
    "cost" DECIMAL(19,4),
    "currency" TEXT,
    "currency_decimals" INTEGER,
    "raw" JSONB NOT NULL,
    "seen_pass_id" UUID,
    "seen_page" INTEGER,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "synced_charges_pkey" PRIMARY KEY ("install_row_id","external_id")
);

-- CreateTable
CREATE TABLE "synced_teams" (
    "install_row_id" UUID NOT NULL,
    "external_id" TEXT NOT NULL,
    "name" TEXT,
    "type" TEXT,
    "raw" JSONB NOT NULL,
    "seen_pass_id" UUID,
    "seen_page" INTEGER,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "synced_teams_pkey" PRIMARY KEY ("install_row_id","external_id")
);

-- CreateTable
CREATE TABLE "sync_checkpoints" (
    "install_row_id" UUID NOT NULL,
    "resource" TEXT NOT NULL,
    "pass_id" UUID,
    "pass_kind" TEXT,
    "pass_started_at" TIMESTAMPTZ(3),
    "next_page" INTEGER NOT NULL DEFAULT 0,
    "per_page" INTEGER NOT NULL,
    "high_water_id" TEXT,
    "high_water_position" INTEGER,
    "last_pass_ended_at" TIMESTAMPTZ(3),
    "last_full_pass_ended_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sync_checkpoints_pkey" PRIMARY KEY ("install_row_id","resource")
);

-- CreateTable
CREATE TABLE "sync_runs" (
    "id" UUID NOT NULL,
    "install_row_id" UUID NOT NULL,
    "resource" TEXT NOT NULL,
    "pass_kind" TEXT,
    "pass_id" UUID,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "duration_ms" INTEGER,
    "pages" INTEGER NOT NULL DEFAULT 0,
    "records_upserted" INTEGER NOT NULL DEFAULT 0,
    "records_deleted" INTEGER NOT NULL DEFAULT 0,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "outcome" TEXT NOT NULL,
    "error_kind" TEXT,

    CONSTRAINT "sync_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "synced_charge_points_install_row_id_site_id_idx" ON "synced_charge_points"("install_row_id", "site_id");

-- CreateIndex
CREATE INDEX "synced_charges_install_row_id_charge_point_id_idx" ON "synced_charges"("install_row_id", "charge_point_id");

-- CreateIndex
CREATE INDEX "synced_charges_install_row_id_started_at_idx" ON "synced_charges"("install_row_id", "started_at");

-- CreateIndex
CREATE INDEX "sync_runs_install_row_id_started_at_idx" ON "sync_runs"("install_row_id", "started_at");

-- AddForeignKey
ALTER TABLE "synced_charge_points" ADD CONSTRAINT "synced_charge_points_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "synced_charges" ADD CONSTRAINT "synced_charges_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "synced_teams" ADD CONSTRAINT "synced_teams_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sync_checkpoints" ADD CONSTRAINT "sync_checkpoints_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sync_runs" ADD CONSTRAINT "sync_runs_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
