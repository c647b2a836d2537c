-- Alert digests (lib/alerts/digest.ts): a storm of per-install alerts folded into one digest.
-- CreateTable
CREATE TABLE "alert_digests" (
    "id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "window_started_at" TIMESTAMPTZ(3) NOT NULL,
    "last_alert_at" TIMESTAMPTZ(3) NOT NULL,
    "alerts" INTEGER NOT NULL DEFAULT 0,
    "held" INTEGER NOT NULL DEFAULT 0,
    "resolved" INTEGER NOT NULL DEFAULT 0,
    "fired_at" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(3),

    CONSTRAINT "alert_digests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_digest_members" (
    "id" BIGSERIAL NOT NULL,
    "digest_id" UUID NOT NULL,
    "incident" TEXT NOT NULL,
    "install_row_id" UUID NOT NULL,
    "held" BOOLEAN NOT NULL,
    "joined_at" TIMESTAMPTZ(3) NOT NULL,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "alert_digest_members_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "alert_digests_type_window_started_at_idx" ON "alert_digests"("type", "window_started_at" DESC);

-- CreateIndex
CREATE INDEX "alert_digests_last_alert_at_idx" ON "alert_digests"("last_alert_at");

-- CreateIndex
CREATE INDEX "alert_digest_members_incident_resolved_at_idx" ON "alert_digest_members"("incident", "resolved_at");

-- CreateIndex
CREATE INDEX "alert_digest_members_digest_id_id_idx" ON "alert_digest_members"("digest_id", "id");

-- AddForeignKey
ALTER TABLE "alert_digest_members" ADD CONSTRAINT "alert_digest_members_digest_id_fkey" FOREIGN KEY ("digest_id") REFERENCES "alert_digests"("id") ON DELETE CASCADE ON UPDATE CASCADE;
