-- AlterTable
ALTER TABLE "installs" ADD COLUMN     "consumer_key" TEXT;

-- CreateTable
CREATE TABLE "authorization_code_claims" (
    "code_hash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "install_row_id" UUID,
    "operator_id" TEXT,
    "failure" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "authorization_code_claims_pkey" PRIMARY KEY ("code_hash")
);

-- CreateIndex
CREATE INDEX "authorization_code_claims_created_at_idx" ON "authorization_code_claims"("created_at");
