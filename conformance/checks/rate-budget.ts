// The rate budget (contract §8, public facts "Rate-limit headers"): a burst of pages (and jobs) stays within the
// install's budget with no 429, and after a 429 the app waits as RateLimit-ResetsIn says.
import { ofType, sleep, tally } from "../sandbox";
import { fail, judge } from "../types";
import type { Check } from "./check";

/** A budget small enough for a burst of pages to reach it (decision A122). */
const BURST_BUDGET = { limit: 8, windowSeconds: 60 };
const BURST_PAGES = 16;
/**
 * How long the 429 storm lasts: the first 429 says RateLimit-ResetsIn 3 or 4, long enough that an app calling again at
 * once shows it even on a machine so loaded that a page takes a second (decision A122).
 */
const STORM_MS = 4_000;
/** Events are stamped when the answer is logged; this much earlier still counts as "waited". */
const STAMP_SLACK_MS = 400;

const burst: Check = {
  id: "rate.burst",
  group: "rate",
  obligation: "A burst of pages and jobs stays within the install's budget, with 0 × 429",
  section: "§8",
  async run(ctx) {
    // The budget is set before the install, so the app learns it the way it would in production (its first answers).
    const { rateLimit } = await ctx.sandbox.control<{ rateLimit: { limit: number; windowSeconds: number } }>("GET", "/rate-limit");
    await ctx.sandbox.control("PUT", "/rate-limit", BURST_BUDGET);
    let installId: number;
    let operator;
    try {
      ({ installId, operator } = await ctx.install());
      await ctx.sandbox.control("PUT", `/installs/${installId}/rate-limit`, BURST_BUDGET);
    } finally {
      await ctx.sandbox.control("PUT", "/rate-limit", rateLimit);
    }
    const [pages, jobs] = await Promise.all([Promise.all(Array.from({ length: BURST_PAGES }, () => ctx.page(operator))), ctx.trigger("jobs")]);
    const counts = await ctx.sandbox.apiRequests(installId);
    const limited = counts.byStatus["429"] ?? 0;
    return judge(
      [
        { ok: limited === 0, seen: `${BURST_PAGES} pages at once${jobs.length ? ` and the scheduled work (${jobs.join(", ")})` : ""}: ${counts.total} API requests, ${limited} × 429` },
        { ok: counts.peakInAnyWindow <= BURST_BUDGET.limit, seen: `most requests in any ${counts.peakWindowSeconds} s: ${counts.peakInAnyWindow} (budget ${BURST_BUDGET.limit} per ${BURST_BUDGET.windowSeconds} s)` },
      ],
      [`the pages answered: ${tally(pages.map((p) => p.status))}; the API answered: ${tally(Object.entries(counts.byStatus).flatMap(([status, n]) => Array(n).fill(status)))}`],
    );
  },
};

const resetsIn: Check = {
  id: "rate.resets-in",
  group: "rate",
  obligation: "After a 429 the app waits as RateLimit-ResetsIn says",
  section: "§8",
  async run(ctx) {
    const installed = await ctx.install();
    await ctx.page(installed.operator);
    const mark = await ctx.sandbox.mark();
    await ctx.sandbox.control("POST", "/api-faults", { path: "/", mode: "rate-limited", forMs: STORM_MS, installId: installed.installId });
    // One page after another (none in flight when a 429 comes back), for a little longer than the storm.
    const started = Date.now();
    let pages = 0;
    while (Date.now() - started < STORM_MS + 1_500) {
      await ctx.page(installed.operator);
      pages++;
      await sleep(100);
    }
    const calls = ofType(await ctx.sandbox.events(mark), "api").filter((e) => e.detail.install_id === installed.installId);
    const first = calls.findIndex((e) => e.detail.status === 429);
    if (first === -1) return fail(`no API call met the 429 storm over ${pages} pages (calls: ${tally(calls.map((e) => e.detail.status))})`);
    const refusal = calls[first]!;
    const waitS = Number(refusal.detail.resets_in ?? 0);
    const until = Date.parse(refusal.at) + waitS * 1000 - STAMP_SLACK_MS;
    const early = calls.slice(first + 1).filter((e) => Date.parse(e.at) < until);
    const laterGood = calls.slice(first + 1).some((e) => e.detail.status === 200);
    return judge([
      { ok: waitS > 0, seen: `the first 429 said RateLimit-ResetsIn: ${waitS}` },
      { ok: early.length === 0, seen: `API calls before those ${waitS} s were over: ${early.length}${early.length ? ` (${tally(early.map((e) => e.detail.status))})` : ""}` },
      { ok: laterGood, seen: `calls after the reset: ${tally(calls.slice(first + 1).map((e) => e.detail.status))} over ${pages} pages` },
    ]);
  },
};

export const rateChecks: Check[] = [burst, resetsIn];
