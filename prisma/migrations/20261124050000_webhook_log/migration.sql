-- CreateTable
CREATE TABLE "webhook_rejections" (
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "reason" TEXT NOT NULL,
    "count" INTEGER NOT NULL,
    "first_at" TIMESTAMPTZ(3) NOT NULL,
    "last_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_rejections_pkey" PRIMARY KEY ("minute","reason")
);

-- CreateIndex
CREATE INDEX "webhook_rejections_reason_minute_idx" ON "webhook_rejections"("reason", "minute" DESC);

-- CreateIndex
CREATE INDEX "webhook_deliveries_received_at_id_idx" ON "webhook_deliveries"("received_at" DESC, "id" DESC);
