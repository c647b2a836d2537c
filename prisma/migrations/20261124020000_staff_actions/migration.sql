-- CreateTable
CREATE TABLE "staff_actions" (
    "id" UUID NOT NULL,
    "staff_email" TEXT NOT NULL,
    "staff_role" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "install_row_id" UUID,
    "install_id" INTEGER,
    "outcome" TEXT NOT NULL,
    "detail" TEXT,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "staff_actions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "staff_actions_requested_at_id_idx" ON "staff_actions"("requested_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "staff_actions_install_row_id_requested_at_id_idx" ON "staff_actions"("install_row_id", "requested_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "staff_actions_staff_email_requested_at_id_idx" ON "staff_actions"("staff_email", "requested_at" DESC, "id" DESC);
