-- CreateTable
CREATE TABLE "alert_incidents" (
    "key" TEXT NOT NULL,
    "open" BOOLEAN NOT NULL DEFAULT false,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "first_failure_at" TIMESTAMPTZ(3),
    "opened_at" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "alert_incidents_pkey" PRIMARY KEY ("key")
);
