// How much slower than an idle machine this run's machine was when the run began: scripts/test.ts
// measures it (measureTimeScale) and passes it as TEST_TIME_SCALE. A test's timeout catches a hang;
// it is not a measure of speed (`npm run bench` is), so every timeout of the suite is multiplied by
// it, and a partner's busy CI runner gets more time rather than a failure that looks like the app's.
// Not a test file: vitest.config.ts, playwright.config.ts and the tests import it.
import { scryptSync } from "node:crypto";

/** The scale, from 1 (idle, or faster) to 8. */
export const TIME_SCALE = Math.min(8, Math.max(1, Number(process.env.TEST_TIME_SCALE) || 1));

/** `ms` on this run's machine. */
export const scaled = (ms: number): number => Math.round(ms * TIME_SCALE);

/**
 * The median of five fixed pieces of CPU work (one scrypt hash at the test stacks' cost, the work
 * the sign-in tests wait on most) against its time on an idle 2-CPU machine of the kind CI uses
 * (about 40 ms, measured 2026-12-02). A faster machine reads as 1.
 */
export function measureTimeScale(): number {
  const IDLE_MS = 40;
  const samples = Array.from({ length: 5 }, () => {
    const started = performance.now();
    scryptSync("time scale", "fixed salt", 64, { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    return performance.now() - started;
  }).sort((a, b) => a - b);
  return Math.min(8, Math.max(1, Math.round((samples[2]! / IDLE_MS) * 10) / 10));
}
