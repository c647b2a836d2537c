-- The refresh history (lib/oauth/refresh-history.ts): one row per refresh attempt, purged by time.
-- CreateTable
CREATE TABLE "refresh_attempts" (
    "id" BIGSERIAL NOT NULL,
    "install_row_id" UUID NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "detail" TEXT,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,

    CONSTRAINT "refresh_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "refresh_attempts_install_row_id_attempted_at_idx" ON "refresh_attempts"("install_row_id", "attempted_at" DESC);

-- CreateIndex
CREATE INDEX "refresh_attempts_attempted_at_idx" ON "refresh_attempts"("attempted_at");
