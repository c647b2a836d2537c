-- CreateEnum
CREATE TYPE "install_status" AS ENUM ('ACTIVE', 'NEEDS_REAUTH', 'REINSTALL_NEEDED', 'REVOKED');

-- CreateTable
CREATE TABLE "installs" (
    "id" UUID NOT NULL,
    "install_id" INTEGER,
    "client_id" TEXT NOT NULL,
    "operator_id" TEXT NOT NULL,
    "slug" TEXT,
    "status" "install_status" NOT NULL DEFAULT 'ACTIVE',
    "granted_scopes" TEXT[],
    "config" JSONB,
    "reauth_url" TEXT,
    "status_changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "installs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "token_grants" (
    "id" UUID NOT NULL,
    "install_row_id" UUID NOT NULL,
    "access_token_encrypted" TEXT NOT NULL,
    "refresh_token_encrypted" TEXT,
    "access_token_expires_at" TIMESTAMPTZ(3) NOT NULL,
    "refresh_token_expires_at" TIMESTAMPTZ(3),
    "scope" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "token_grants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "install_events" (
    "id" UUID NOT NULL,
    "install_row_id" UUID NOT NULL,
    "from_status" "install_status",
    "to_status" "install_status" NOT NULL,
    "cause" TEXT NOT NULL,
    "detail" TEXT,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "install_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "dedupe_key" TEXT NOT NULL,
    "event_type" TEXT,
    "install_id" INTEGER,
    "delivered_at" TIMESTAMPTZ(3),
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "outcome" TEXT NOT NULL,
    "detail" TEXT,
    "payload" JSONB,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "installs_install_id_key" ON "installs"("install_id");

-- CreateIndex
CREATE INDEX "installs_client_id_operator_id_idx" ON "installs"("client_id", "operator_id");

-- CreateIndex
CREATE UNIQUE INDEX "token_grants_install_row_id_key" ON "token_grants"("install_row_id");

-- CreateIndex
CREATE INDEX "install_events_install_row_id_occurred_at_idx" ON "install_events"("install_row_id", "occurred_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_dedupe_key_key" ON "webhook_deliveries"("dedupe_key");

-- CreateIndex
CREATE INDEX "webhook_deliveries_event_type_install_id_idx" ON "webhook_deliveries"("event_type", "install_id");

-- AddForeignKey
ALTER TABLE "token_grants" ADD CONSTRAINT "token_grants_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "install_events" ADD CONSTRAINT "install_events_install_row_id_fkey" FOREIGN KEY ("install_row_id") REFERENCES "installs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Written by hand below this line: what schema.prisma cannot express. Everything above is
-- exactly what Prisma generates for prisma/schema.prisma, so Prisma sees no drift.
-- ---------------------------------------------------------------------------------------------

-- contract §2: "Only one active install can exist per app and operator." A re-install is a new
-- row with a new install_id. The old row is REVOKED first and stays as history, so revoked rows
-- may repeat. NEEDS_REAUTH and REINSTALL_NEEDED installs are still the live one for the operator.
-- (No semicolons in these comments: some tools split scripts on every semicolon.)
-- CreateIndex
CREATE UNIQUE INDEX "installs_one_live_per_operator" ON "installs"("client_id", "operator_id") WHERE "status" IN ('ACTIVE', 'NEEDS_REAUTH', 'REINSTALL_NEEDED');
