-- AlterTable
ALTER TABLE "token_grants" ADD COLUMN     "last_refreshed_at" TIMESTAMPTZ(3),
ADD COLUMN     "refresh_started_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "oauth_client_health" (
    "client_id" TEXT NOT NULL,
    "circuit_open" BOOLEAN NOT NULL,
    "reason" TEXT,
    "secret_fingerprint" TEXT,
    "opened_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "oauth_client_health_pkey" PRIMARY KEY ("client_id")
);
