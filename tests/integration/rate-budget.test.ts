// The per-install rate budget (issue 11, contract §8; lib/partner-api/budget.ts and client.ts),
// proven against the sandbox's limiter: a fixed window per install, the strictest realistic server
// for a client that bursts. The sandbox counts each install's requests, how they were answered, and
// the most that arrived within any span of the window's length, so every assertion here is a count.
//
// The test stack's service grants 100,000 requests a minute (scripts/test.ts); each test sets the
// limits it is about at the sandbox before installing, so the app sizes the budget from the
// service's own answer (/consumers/me at the redirect_uri), as it would in production.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker, startAppWorker } from "../helpers/app-process";
import {
  apiRequestCounts as requestCounts,
  armApiFault,
  clearApiFaults,
  closeSql,
  installViaPortal,
  resetWorld,
  setDefaultRateLimit,
  setRateLimit,
  sql,
  stack,
} from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

beforeEach(resetWorld);
afterEach(clearApiFaults);
afterAll(closeSql);

/** The limit of every install without its own, existing and future (until resetWorld restores the stack's). */
const setDefaultLimit = (limit: number, windowSeconds: number) => setDefaultRateLimit({ limit, windowSeconds });

type Counters = { requests: number; rateLimited: number; retries: number; waitedForBudget: number; budgetExhausted: number };
type Burst = { ok: number; errors: Record<string, number>; counters: Counters };
const burst = async (installRowId: string, count: number, priority: "interactive" | "background", env: Record<string, string> = {}) =>
  resultOf<Burst>(await runAppWorker(["api-burst", installRowId, String(count), priority], env));

/** A burst that starts only once `arm` has run in a process already up: a storm must not end while node starts. */
async function burstAfter(arm: () => Promise<unknown>, installRowId: string, count: number, priority: "interactive" | "background") {
  const worker = startAppWorker(["api-burst", installRowId, String(count), priority, "gated"]);
  await new Promise<void>((resolve, reject) => {
    worker.child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("READY") && resolve());
    void worker.done.then((run) => reject(new Error(`the worker stopped before it was ready: ${run.stderr.slice(-500)}`)));
  });
  await arm();
  worker.child.stdin!.write("go\n");
  return resultOf<Burst>(await worker.done);
}

describe("the rate budget", () => {
  it("a burst of 1,500 calls for one install from two processes completes with zero 429s, never above the limit in any window", async () => {
    await setDefaultLimit(500, 5);
    const install = await installViaPortal(1001);
    const runs = await Promise.all([0, 1].map(() => burst(install.installRowId, 750, "background")));
    expect(runs.map((run) => run.errors)).toEqual([{}, {}]);
    expect(runs[0]!.ok + runs[1]!.ok).toBe(1500);

    const counts = await requestCounts(install.installId);
    expect(counts.byStatus["429"] ?? 0).toBe(0);
    expect(counts.byStatus["200"]).toBe(1500 + 1); // the calls, and the redirect_uri's /consumers/me
    // Against any server: never more than the limit within any 5-second span.
    expect(counts.peakInAnyWindow).toBeLessThanOrEqual(500);
    // And the pace was the budget's: the processes had to wait for it.
    expect(runs[0]!.counters.waitedForBudget + runs[1]!.counters.waitedForBudget).toBeGreaterThan(0);
  }, scaled(90_000));

  it("believes the service when it counts more of the install's requests than the app sent: zero 429s", async () => {
    await setDefaultLimit(100, 5);
    const install = await installViaPortal(1001);
    // Another client of the same install (an old release, a script) spends most of the window.
    const spent = resultOf<{ statuses: Record<string, number> }>(await runAppWorker(["spend", install.installRowId, "80"]));
    expect(spent.statuses).toEqual({ 200: 80 });
    const run = await burst(install.installRowId, 60, "background");
    expect(run.errors).toEqual({});
    expect(run.ok).toBe(60);
    expect((await requestCounts(install.installId)).byStatus["429"] ?? 0).toBe(0);
  }, scaled(60_000));

  it("follows the service when it lowers an install's limit: one answer resizes the budget, then zero 429s", async () => {
    const install = await installViaPortal(1001); // sized by /consumers/me: the stack's generous default
    await setRateLimit(install.installId, { limit: 100, windowSeconds: 5 });
    // Requests already under way when the limit changed could not know; the first answer tells.
    expect((await burst(install.installRowId, 1, "interactive")).ok).toBe(1);
    const run = await burst(install.installRowId, 300, "background");
    expect(run.errors).toEqual({});
    const counts = await requestCounts(install.installId);
    expect(counts.byStatus["429"] ?? 0).toBe(0);
    expect(counts.peakInAnyWindow).toBeLessThanOrEqual(100);
    const [row] = await sql<{ quota: number; window_seconds: number }>("SELECT quota, window_seconds FROM api_budgets WHERE install_row_id = $1", [install.installRowId]);
    expect(row).toEqual({ quota: 100, window_seconds: 5 });
  }, scaled(60_000));

  it("a 429 storm with RateLimit-ResetsIn: every caller waits for the reset, each call meets at most one 429, all succeed", async () => {
    await setDefaultLimit(1000, 60); // contract §8's default: a burst of 20, then one request every 62.5 ms
    const install = await installViaPortal(1001);
    const CALLS = 30;
    const run = await burstAfter(
      () => armApiFault({ path: "/charge-points", mode: "rate-limited", forMs: 2_000, installId: install.installId }),
      install.installRowId,
      CALLS,
      "interactive",
    );
    expect(run.errors).toEqual({});
    expect(run.ok).toBe(CALLS);
    const counts = await requestCounts(install.installId);
    const tooMany = counts.byStatus["429"] ?? 0;
    // Only requests already sent (or reserved) when the first 429 came back met the storm; nobody retried into it.
    expect(tooMany).toBeGreaterThan(0);
    expect(tooMany).toBeLessThanOrEqual(CALLS);
    expect(run.counters.retries).toBe(tooMany);
    expect(counts.byStatus["200"]).toBe(CALLS + 1);
  }, scaled(60_000));

  it("a 429 storm without RateLimit-ResetsIn: full-jitter backoff on a held budget, far fewer retries than callers × attempts", async () => {
    await setDefaultLimit(1000, 60);
    const install = await installViaPortal(1001);
    const CALLS = 30;
    const run = await burstAfter(
      () => armApiFault({ path: "/charge-points", mode: "rate-limited", forMs: 2_000, installId: install.installId, resetsIn: "omit" }),
      install.installRowId,
      CALLS,
      "background",
    );
    expect(run.errors).toEqual({});
    expect(run.ok).toBe(CALLS);
    const tooMany = (await requestCounts(install.installId)).byStatus["429"] ?? 0;
    // Each hold lets one request per interval out after it: a handful test the storm, not all 30 at once.
    expect(tooMany).toBeGreaterThan(0);
    expect(tooMany).toBeLessThan(CALLS + 10);
    expect(run.counters.retries).toBe(tooMany);
  }, scaled(60_000));

  it("a 5xx storm ends with bounded retries and a clear error", async () => {
    const install = await installViaPortal(1001);
    await armApiFault({ path: "/charge-points", mode: "error503", forMs: 60_000, installId: install.installId });
    const CALLS = 5;
    const run = await burst(install.installRowId, CALLS, "interactive");
    expect(run.ok).toBe(0);
    expect(run.errors).toEqual({ "PartnerApiError:unavailable": CALLS });
    // API_MAX_RETRIES (3): four attempts per call, no more.
    const counts = await requestCounts(install.installId);
    expect(counts.byStatus["503"]).toBe(CALLS * 4);
    expect(run.counters.retries).toBe(CALLS * 3);
  }, scaled(60_000));

  it("a service that never answers: each attempt times out, bounded retries, then a timeout error", async () => {
    const install = await installViaPortal(1001);
    await armApiFault({ path: "/charge-points", mode: "timeout", forMs: 60_000, installId: install.installId });
    const run = await burst(install.installRowId, 1, "interactive", { HTTP_TIMEOUT_MS: "300" });
    expect(run.errors).toEqual({ "PartnerApiError:timeout": 1 });
    expect(run.counters.requests).toBe(4);
    expect((await requestCounts(install.installId)).faulted).toBe(4);
  }, scaled(60_000));

  it("one install saturating its budget does not slow another in the same process", async () => {
    await setDefaultLimit(50, 5);
    const busy = await installViaPortal(1001);
    // Its own limit: the default changes for every install without one.
    await setRateLimit(busy.installId, { limit: 50, windowSeconds: 5 });
    await setDefaultLimit(1000, 60);
    const calm = await installViaPortal(1002);
    const run = resultOf<{ b: { ok: number; errors: Record<string, number> }; bCounters: Counters; aWaitingWhenBDone: number; aCounters: Counters }>(
      await runAppWorker(["fairness", busy.installRowId, calm.installRowId, "200", "15"]),
    );
    expect(run.b).toEqual({ ok: 15, errors: {} });
    expect(run.bCounters.waitedForBudget).toBe(0);
    expect(run.bCounters.rateLimited).toBe(0);
    // The busy install was still waiting for its budget all along.
    expect(run.aCounters.waitedForBudget).toBeGreaterThan(0);
    expect(run.aWaitingWhenBDone).toBeGreaterThan(100);
    expect((await requestCounts(busy.installId)).byStatus["429"] ?? 0).toBe(0);
  }, scaled(60_000));

  it("a page view during a background job that saturates the install's budget is served from the reserve", async () => {
    await setDefaultLimit(500, 5);
    const install = await installViaPortal(1001);
    const job = startAppWorker(["api-burst", install.installRowId, "3000", "background"]);
    try {
      // The job is saturating the budget once the sandbox sees more than the burst in this window.
      for (let i = 0; i < 200 && (await requestCounts(install.installId)).total < 60; i++) await new Promise((r) => setTimeout(r, 50));
      const response = await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: install.sessionCookie } });
      const html = await response.text();
      expect(response.status).toBe(200);
      expect(html).not.toContain('role="alert"');
      expect(html).toContain('data-testid="charge-point-count"');
      expect((await requestCounts(install.installId)).byStatus["429"] ?? 0).toBe(0);
    } finally {
      job.child.kill("SIGKILL");
      await job.done;
    }
  }, scaled(60_000));

  it("a page that cannot get budget within its deadline says busy and when to try again, without hammering", async () => {
    // Two requests a minute: the redirect_uri's /consumers/me, then the visit's check of the install
    // (lib/installs/reconcile.ts); the page's one read (charge points, live before any sync) finds none left.
    await setDefaultLimit(2, 60);
    const install = await installViaPortal(1001);
    const response = await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: install.sessionCookie } });
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(html).toContain('data-reason="rate_limited"');
    expect(html).toMatch(/Busy: this install has used its request budget at the service for now\. Try again in \d+ s\./);
    // The page asked once for what it could have, and not again for what it could not.
    const counts = await requestCounts(install.installId);
    expect(counts.byStatus["429"] ?? 0).toBe(0);
    expect(counts.total).toBe(2);
  }, scaled(60_000));
});
