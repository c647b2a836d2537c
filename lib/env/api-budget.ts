// The partner API's rate budget (lib/partner-api/budget.ts, contract §8).
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";

export const apiBudgetShape = {
  /**
   * The share of each install's rate limit the app never plans to use: it absorbs the spread of
   * network delays between the app's clock and the service's counting. Half of it is the burst
   * pages may take at once; the steady rate is (1 - margin) of the limit.
   */
  API_BUDGET_MARGIN: z.coerce.number().min(0.01).max(0.5).default(0.04),
  /** How long a page's API call may wait for budget (and retries) before the page says "busy". */
  API_INTERACTIVE_DEADLINE_MS: z.coerce.number().int().min(500).max(60_000).default(8_000),
  /** How long background work (sweeps, sync) may wait for budget per call before giving up. */
  API_BACKGROUND_DEADLINE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(120_000),
  /** Retries of one call after a 429, and after a 5xx or timeout (idempotent requests only). */
  API_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
};
