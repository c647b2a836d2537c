// The `npm run bench` switch.
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";

export const benchShape = {
  /**
   * `npm run bench` only: turns on /api/bench/empty, an empty route handler the bench measures as
   * the framework's own cost. Off (the default) it answers 404, so production never serves it.
   */
  BENCH_EMPTY_ROUTE: z.enum(["on", "off"]).default("off"),
};
