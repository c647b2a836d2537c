-- A routine success folds into the install's latest row when that row is the same routine success
-- from the last 24 hours (lib/oauth/refresh-history.ts): one row per install a day instead of 24.
ALTER TABLE "refresh_attempts" ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "refresh_attempts" ADD COLUMN "last_attempted_at" TIMESTAMPTZ(3);
