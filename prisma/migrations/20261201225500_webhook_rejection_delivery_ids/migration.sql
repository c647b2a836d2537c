-- The delivery ids of signed deliveries refused with 503 (not recorded), per minute, so staff can
-- ask the service for a replay of just those (contract §6: replays on request). Only authentic
-- deliveries carry one here (the id is read after the signature passed), at most 200 per row.
ALTER TABLE "webhook_rejections" ADD COLUMN "delivery_ids" TEXT[] DEFAULT ARRAY[]::TEXT[];
