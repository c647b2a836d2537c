-- A rate-limit hold staff can see and clear (lib/partner-api/budget.ts; issue 34): until when the
-- install's budget is held, and what the service said that made it so. Every app process reads the
-- hold from here, so a hold cleared from the console ends in all of them.
ALTER TABLE "api_budgets" ADD COLUMN "held_until" TIMESTAMPTZ(6), ADD COLUMN "hold_said" TEXT;

-- Records a sync stored with text made safe (a NUL or a lone surrogate, which PostgreSQL refuses:
-- lib/sync/engine.ts), per run, for the console's sync status.
ALTER TABLE "sync_runs" ADD COLUMN "records_cleaned" INTEGER NOT NULL DEFAULT 0;
