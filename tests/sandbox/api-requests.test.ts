// Request counters per install (GET/DELETE /_sandbox/installs/:id/api-requests; README decision 38): what lets a test
// count instead of time. byStatus, the limiter's windows, faulted requests, and peakInAnyWindow: the most requests that
// arrived within any span of the install's window, which catches a client that keeps clear of 429s here by bursting
// across a fixed window's edge but would be refused by a service that counts any other way.
import type { ApiRequestCounts } from "../../sandbox/api/counters.js";
import { beforeEach, describe, expect, it } from "vitest";
import { peakWithinSpan } from "../../sandbox/api/counters.js";
import { advanceClock, callApi, control, controlRaw, installAndRedeem, resetSandbox, setUpTestSandbox, type TokenSet } from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

type Counts = ApiRequestCounts;

function counts(installId: number, query = ""): Promise<Counts> {
  return control<Counts>(env, "GET", `/installs/${installId}/api-requests${query}`);
}

async function send(tokens: TokenSet, n: number, path = "/consumers/me"): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 1) statuses.push((await callApi(env, path, tokens.access_token)).status);
  return statuses;
}

describe("what is counted", () => {
  it("every request of a resolved token, by status; the limiter's windows with their refusals; faulted requests apart", async () => {
    const tokens = await installAndRedeem(env, 1001);
    expect(await counts(1)).toEqual({
      installId: 1,
      total: 0,
      byStatus: {},
      faulted: 0,
      windows: [],
      peakInAnyWindow: 0,
      peakWindowSeconds: 60,
      arrivalsKept: 0,
    });
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 3, windowSeconds: 10 });
    const { now: firstWindowAt } = await control<{ now: string }>(env, "GET", "/clock");
    expect(await send(tokens, 4)).toEqual([200, 200, 200, 429]);
    await advanceClock(env, 10);
    expect(await send(tokens, 1, "/teams")).toEqual([403]); // not granted, but counted and within the budget
    await control(env, "POST", "/api-faults", { path: "/", mode: "error503", count: 1 });
    expect(await send(tokens, 1)).toEqual([503]);
    expect(await send(tokens, 1, "/charges?perPage=0")).toEqual([400]);
    await callApi(env, "/consumers/me", "volt_at_unknown"); // 401: no install to count it for

    const seen = await counts(1);
    expect(seen).toMatchObject({
      installId: 1,
      total: 7,
      byStatus: { "200": 3, "400": 1, "403": 1, "429": 1, "503": 1 },
      faulted: 1,
      peakWindowSeconds: 10,
      arrivalsKept: 7,
    });
    expect(seen.windows.map((w) => [w.count, w.limited])).toEqual([
      [4, 1],
      [2, 0], // the 403 and the 400; the faulted 503 never reached the limiter
    ]);
    expect(Date.parse(seen.windows[0]!.startedAt) - Date.parse(firstWindowAt)).toBeLessThan(1000);
    expect(Date.parse(seen.windows[1]!.startedAt) - Date.parse(seen.windows[0]!.startedAt)).toBeGreaterThanOrEqual(10_000);
  });

  it("counts each install apart", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    await send(a, 3);
    await send(b, 1);
    expect((await counts(1)).total).toBe(3);
    expect((await counts(2)).total).toBe(1);
  });
});

describe("peakInAnyWindow", () => {
  it("is the most arrivals within any span of the window's length, on the sandbox clock, whatever the windows were", async () => {
    const tokens = await installAndRedeem(env, 1001);
    // Arrivals at t = 0 (×3), 50 (×4) and 70 (×2) seconds.
    await send(tokens, 3);
    await advanceClock(env, 50);
    await send(tokens, 4);
    await advanceClock(env, 20);
    await send(tokens, 2);
    const seen = await counts(1);
    expect(seen.peakInAnyWindow).toBe(7); // [0, 60) holds 3 + 4; [50, 110) holds 4 + 2
    expect(seen.windows.map((w) => w.count)).toEqual([7, 2]); // the limiter's window opened at 0 and closed at 60
    expect((await counts(1, "?windowSeconds=30")).peakInAnyWindow).toBe(6); // [50, 80)
    expect((await counts(1, "?windowSeconds=5")).peakInAnyWindow).toBe(4);
    expect((await counts(1, "?windowSeconds=3600")).peakInAnyWindow).toBe(9);
  });

  it("catches a client that bursts across a window edge: no 429 from the fixed window, yet more than its budget within one span", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 4, windowSeconds: 60 });
    expect(await send(tokens, 1)).toEqual([200]); // opens the window at t = 0
    await advanceClock(env, 58);
    expect(await send(tokens, 3)).toEqual([200, 200, 200]); // t = 58: the window's last 3
    await advanceClock(env, 3);
    expect(await send(tokens, 4)).toEqual([200, 200, 200, 200]); // t = 61: a new window, full budget again
    const seen = await counts(1);
    expect(seen.byStatus).toEqual({ "200": 8 });
    expect(seen.windows.map((w) => [w.count, w.limited])).toEqual([
      [4, 0],
      [4, 0],
    ]);
    expect(seen.peakInAnyWindow).toBe(7); // 3 at t = 58 and 4 at t = 61: nearly twice the budget within 60 s
  });

  it("the span is half-open: requests a whole window apart are never in the same span", () => {
    expect(peakWithinSpan([], 1000)).toBe(0);
    expect(peakWithinSpan([0], 1000)).toBe(1);
    expect(peakWithinSpan([0, 999, 1000], 1000)).toBe(2);
    expect(peakWithinSpan([0, 1000, 2000, 3000], 1000)).toBe(1);
    expect(peakWithinSpan([0, 10, 20, 500, 1400, 1450, 1499, 1500], 1000)).toBe(4); // [500, 1500): 500, 1400, 1450, 1499
  });
});

describe("clearing", () => {
  it("DELETE clears one install's counts between phases of a test; its budget and open window are untouched", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 3, windowSeconds: 60 });
    await send(a, 2);
    await send(b, 2);
    const cleared = await control<Counts>(env, "DELETE", "/installs/1/api-requests");
    expect(cleared).toMatchObject({ installId: 1, total: 0, byStatus: {}, windows: [], peakInAnyWindow: 0 });
    expect((await counts(2)).total).toBe(2);

    expect(await send(a, 2)).toEqual([200, 429]); // the window kept its first 2 requests
    const after = await counts(1);
    expect(after).toMatchObject({ total: 2, byStatus: { "200": 1, "429": 1 }, peakInAnyWindow: 2 });
    expect(after.windows.map((w) => [w.count, w.limited])).toEqual([[2, 1]]); // counted since the DELETE only
  });

  it("POST /_sandbox/reset clears every install's counts", async () => {
    const a = await installAndRedeem(env, 1001);
    await send(a, 2);
    await resetSandbox(env);
    await installAndRedeem(env, 1001); // install 1 again
    expect((await counts(1)).total).toBe(0);
  });

  it("an unknown install is a 404, a bad span a 400", async () => {
    await installAndRedeem(env, 1001);
    expect((await controlRaw(env, "GET", "/installs/9/api-requests")).status).toBe(404);
    expect((await controlRaw(env, "DELETE", "/installs/9/api-requests")).status).toBe(404);
    for (const query of ["?windowSeconds=0", "?windowSeconds=3601", "?windowSeconds=1.5", "?windowSeconds=x", "?span=5"]) {
      const response = await controlRaw(env, "GET", `/installs/1/api-requests${query}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain("windowSeconds");
    }
  });
});
