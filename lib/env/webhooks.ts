// Webhooks from the service (contract §6): the signature secrets and what a delivery may cost.
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";

export const webhooksShape = {
  /** contract §6: key for webhook signatures. */
  WEBHOOK_SECRET: z.string().min(16),
  /** The secret being rotated out: accepted too while a rotation is under way. */
  WEBHOOK_PREVIOUS_SECRET: z.string().min(16).optional(),
  /** contract §6.4: how far `delivered_at` may be from now, each way (window not shown; 5 minutes). */
  WEBHOOK_TOLERANCE_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  WEBHOOK_MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(10 * 1024 * 1024).default(256 * 1024),
  /**
   * contract §6: the service waits 10 s for a 2xx. A body that has not fully arrived after this long
   * gets 408, so a stalled or trickling sender cannot hold a request open for long.
   */
  WEBHOOK_READ_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(9_000, "keep it well inside the service's 10-second deadline (contract §6)")
    .default(5_000),
  /**
   * contract §6: the service gives up after 10 s and never retries. A delivery not recorded this
   * long after it arrived (body read included) is answered 503 with nothing recorded, so the answer
   * still reaches the service inside its deadline and is logged there as a failure to replay.
   */
  WEBHOOK_RECORD_DEADLINE_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(9_500, "keep it inside the service's 10-second deadline (contract §6)")
    .default(8_500),
  /**
   * Connections of the webhook ingest's own pool (lib/db/ingest-pool.ts), on top of
   * DATABASE_POOL_SIZE: a burst of deliveries queues for these and never for the pages' connections.
   */
  WEBHOOK_DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(4),
};
