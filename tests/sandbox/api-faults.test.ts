// Faults on partner API routes, for a while (POST/GET/DELETE /_sandbox/api-faults; README decision 37): 429 storms with
// and without RateLimit-ResetsIn, 500 and 503 storms, slow answers and requests never answered, per route and per
// install, ending after a count or a time. A gateway in front of the limiter: after the token, before the budget.
import type { ArmedApiFault } from "../../sandbox/api/faults.js";
import { beforeEach, describe, expect, it } from "vitest";
import { faultPathMatches } from "../../sandbox/api/faults.js";
import {
  callApi,
  control,
  controlRaw,
  events,
  installAndRedeem,
  resetSandbox,
  setUpTestSandbox,
  startTestSandbox,
  type TokenSet,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

type ArmedFault = ArmedApiFault;

const RATE_LIMITED = { status: "TOO_MANY_REQUESTS", errorCode: "RATE_LIMIT_EXCEEDED", message: "Rate limit exceeded" };

function arm(body: Record<string, unknown>): Promise<{ armed: ArmedFault; faults: ArmedFault[] }> {
  return control(env, "POST", "/api-faults", body);
}

function armedNow(): Promise<{ faults: ArmedFault[]; held: number }> {
  return control(env, "GET", "/api-faults");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Resolves to the error a fetch rejected with, or null if it got an answer. */
async function transportError(request: Promise<Response>): Promise<Error | null> {
  try {
    await request;
    return null;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

async function counts(installId: number): Promise<{ total: number; byStatus: Record<string, number>; faulted: number; windows: { count: number }[] }> {
  return control(env, "GET", `/installs/${installId}/api-requests`);
}

describe("mode rate-limited", () => {
  it("answers 429 as the limiter does, with RateLimit-ResetsIn = seconds until the fault ends, on that route only, then recovers", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const { armed } = await arm({ path: "/charges", mode: "rate-limited", forMs: 2900 });
    expect(armed).toMatchObject({ id: 1, path: "/charges", mode: "rate-limited", installId: null, remaining: null, resetsIn: "send", affected: 0 });
    expect(Date.parse(armed.expiresAt!) - Date.now()).toBeGreaterThan(2000);

    const refused = await callApi(env, "/charges?perPage=5", tokens.access_token);
    expect(refused.status).toBe(429);
    const resetsIn = Number(refused.headers.get("ratelimit-resetsin"));
    expect(resetsIn).toBe(3); // ceil of the 2.9 s left (less whatever this request took to arrive)
    expect(await refused.json()).toEqual({ ...RATE_LIMITED, context: { resetsInSeconds: resetsIn } });
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("ratelimit-policy")).toBe("1000;w=60");
    expect(refused.headers.get("retry-after")).toBeNull();

    expect((await callApi(env, "/charge-points", tokens.access_token)).status).toBe(200); // another route
    expect((await armedNow()).faults).toEqual([{ ...armed, affected: 1 }]);
  });

  it("ends after forMs of wall-clock time: ResetsIn counts down to it, then the route answers and the fault is gone", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await arm({ path: "/charges", mode: "rate-limited", forMs: 600 });
    const refused = await callApi(env, "/charges", tokens.access_token);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("ratelimit-resetsin")).toBe("1"); // rounded up, never 0 while it lasts
    await sleep(650);
    expect((await callApi(env, "/charges", tokens.access_token)).status).toBe(200);
    expect((await armedNow()).faults).toEqual([]);
  });

  it('with resetsIn "omit" and a count: no RateLimit-ResetsIn and no resetsInSeconds, so the client needs its own backoff', async () => {
    const tokens = await installAndRedeem(env, 1001);
    await arm({ path: "/charges", mode: "rate-limited", count: 2, resetsIn: "omit" });
    for (let i = 0; i < 2; i += 1) {
      const refused = await callApi(env, "/charges", tokens.access_token);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ ...RATE_LIMITED, context: {} });
      expect(refused.headers.has("ratelimit-resetsin")).toBe(false);
      expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    }
    expect((await callApi(env, "/charges", tokens.access_token)).status).toBe(200); // count used up
  });

  it("does not spend the install's budget: the faulted requests never reach the limiter", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 3, windowSeconds: 60 });
    await arm({ path: "/", mode: "rate-limited", count: 5, resetsIn: "omit" });
    for (let i = 0; i < 5; i += 1) expect((await callApi(env, "/consumers/me", tokens.access_token)).status).toBe(429);
    const served = await callApi(env, "/consumers/me", tokens.access_token);
    expect(served.status).toBe(200);
    expect(served.headers.get("ratelimit-remaining")).toBe("2");
    expect(await counts(1)).toMatchObject({ total: 6, faulted: 5, byStatus: { "200": 1, "429": 5 }, windows: [{ count: 1 }] });
  });
});

describe("modes error500 and error503", () => {
  it("answer in the service's error shape, without RateLimit-* headers, for `count` requests; the event log names the fault", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await arm({ path: "/charge-points", mode: "error500", count: 1 });
    await arm({ path: "/charge-points", mode: "error503", count: 2 });

    const first = await callApi(env, "/charge-points", tokens.access_token);
    expect(first.status).toBe(500);
    expect(await first.json()).toEqual({
      status: "INTERNAL_SERVER_ERROR",
      errorCode: "INTERNAL_SERVER_ERROR",
      message: "An unexpected error occurred. Please try again later.",
      context: {},
    });
    expect(first.headers.has("ratelimit-policy")).toBe(false);
    expect((await armedNow()).faults.map((f) => [f.mode, f.remaining])).toEqual([["error503", 2]]);

    for (let i = 0; i < 2; i += 1) {
      const unavailable = await callApi(env, "/charge-points", tokens.access_token);
      expect(unavailable.status).toBe(503);
      expect(await unavailable.json()).toEqual({
        status: "SERVICE_UNAVAILABLE",
        errorCode: "SERVICE_UNAVAILABLE",
        message: "The service is temporarily unavailable. Please try again later.",
        context: {},
      });
    }
    expect((await callApi(env, "/charge-points", tokens.access_token)).status).toBe(200);

    const logged = (await events(env, "?type=api")).map((e) => [e.detail.status, e.detail.error_code, e.detail.fault ?? null]);
    expect(logged).toEqual([
      [500, "INTERNAL_SERVER_ERROR", "error500"],
      [503, "SERVICE_UNAVAILABLE", "error503"],
      [503, "SERVICE_UNAVAILABLE", "error503"],
      [200, null, null],
    ]);
  });

  it("target one install when installId is given; the others are served", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    await arm({ path: "/", mode: "error500", forMs: 60_000, installId: 2 });
    expect((await callApi(env, "/charge-points", a.access_token)).status).toBe(200);
    expect((await callApi(env, "/charge-points", b.access_token)).status).toBe(500);
    expect((await callApi(env, "/consumers/me", b.access_token)).status).toBe(500);
    expect((await counts(1)).faulted).toBe(0);
    expect((await counts(2)).faulted).toBe(2);
  });

  it("apply after authentication: a bad or missing token still gets 401 and uses no count", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await arm({ path: "/", mode: "error503", count: 1 });
    expect((await callApi(env, "/charges", "volt_at_unknown")).status).toBe(401);
    expect((await fetch(`${env.url}/api/v1/charges`)).status).toBe(401);
    expect((await armedNow()).faults[0]).toMatchObject({ remaining: 1, affected: 0 });
    expect((await callApi(env, "/charges", tokens.access_token)).status).toBe(503);
  });
});

describe("several faults at once", () => {
  it("the oldest matching fault applies; a path matches exactly or as a prefix at a '/'; each can be cleared on its own", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const { armed: first } = await arm({ path: "/charges", mode: "error500", count: 1 });
    await arm({ path: "/", mode: "error503", count: 10 });
    expect((await callApi(env, "/charges", tokens.access_token)).status).toBe(500); // the oldest that matches
    expect((await callApi(env, "/charges", tokens.access_token)).status).toBe(503); // the first is used up
    expect((await callApi(env, "/teams", tokens.access_token)).status).toBe(503);

    const { faults } = await armedNow();
    expect(faults).toHaveLength(1);
    expect(faults[0]).toMatchObject({ path: "/", remaining: 8, affected: 2 });
    expect(first.id).not.toBe(faults[0]!.id);
    expect(await control(env, "DELETE", `/api-faults/${faults[0]!.id}`)).toEqual({ faults: [] });
    expect((await controlRaw(env, "DELETE", `/api-faults/${faults[0]!.id}`)).status).toBe(404);
    expect((await callApi(env, "/teams", tokens.access_token)).status).toBe(403); // the real answer again
  });

  it("path matching", () => {
    expect(faultPathMatches("/charges", "/charges")).toBe(true);
    expect(faultPathMatches("/charges", "/charges/")).toBe(true);
    expect(faultPathMatches("/charges", "/charges/12")).toBe(true);
    expect(faultPathMatches("/charges", "/charge-points")).toBe(false);
    expect(faultPathMatches("/charges", "/charges-archive")).toBe(false);
    expect(faultPathMatches("/consumers", "/consumers/me")).toBe(true);
    expect(faultPathMatches("/", "/teams")).toBe(true);
  });

  it("DELETE /_sandbox/api-faults and POST /_sandbox/reset clear them all", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await arm({ path: "/charges", mode: "error500", forMs: 60_000 });
    await arm({ path: "/teams", mode: "error503", forMs: 60_000 });
    expect(await control(env, "DELETE", "/api-faults")).toEqual({ faults: [] });
    expect((await callApi(env, "/charges", tokens.access_token)).status).toBe(200);
    await arm({ path: "/charges", mode: "error500", forMs: 60_000 });
    await resetSandbox(env);
    expect(await armedNow()).toEqual({ faults: [], held: 0 });
  });
});

describe("mode latency", () => {
  it("answers normally after latencyMs, and the request counts against the budget as usual", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await arm({ path: "/charge-points", mode: "latency", latencyMs: 400, count: 1 });
    const started = performance.now();
    const slow = await callApi(env, "/charge-points?perPage=3", tokens.access_token);
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(slow.status).toBe(200);
    expect(((await slow.json()) as { data: unknown[] }).data).toHaveLength(3);
    expect(slow.headers.get("ratelimit-remaining")).toBe("999");
    expect(await counts(1)).toMatchObject({ total: 1, faulted: 1, byStatus: { "200": 1 }, windows: [{ count: 1 }] });
  });
});

describe("mode timeout", () => {
  let tokens: TokenSet;
  beforeEach(async () => {
    tokens = await installAndRedeem(env, 1001);
  });

  it("holds the request without answering until the client gives up; nothing is left held", async () => {
    await arm({ path: "/charges", mode: "timeout", count: 1 });
    const abort = new AbortController();
    const request = transportError(fetch(`${env.url}/api/v1/charges`, { headers: { Authorization: `Bearer ${tokens.access_token}` }, signal: abort.signal }));
    await waitFor(async () => (await armedNow()).held === 1, "the request to be held");
    await sleep(150);
    expect((await armedNow()).held).toBe(1); // still no answer
    abort.abort();
    expect((await request)?.name).toBe("AbortError");
    await waitFor(async () => (await armedNow()).held === 0, "the hold to end");
    expect(await counts(1)).toMatchObject({ total: 1, faulted: 1, byStatus: { no_answer: 1 }, windows: [] });
    const [logged] = await events(env, "?type=api");
    expect(logged?.detail).toMatchObject({ path: "/api/v1/charges", install_id: 1, status: null, fault: "timeout" });
    expect((await callApi(env, "/charges", tokens.access_token)).status).toBe(200); // count used up
  });

  it("drops the connection without an answer when holdMs is over", async () => {
    await arm({ path: "/charges", mode: "timeout", holdMs: 300, forMs: 60_000 });
    const started = performance.now();
    const error = await transportError(callApi(env, "/charges", tokens.access_token));
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(error).toBeInstanceOf(TypeError); // fetch failed: the other side closed
    expect((await armedNow()).held).toBe(0);
    expect((await counts(1)).byStatus).toEqual({ no_answer: 1 });
  });

  it("a reset drops the requests still held, and they leave no trace in the fresh event log", async () => {
    await arm({ path: "/", mode: "timeout", forMs: 60_000 });
    const request = transportError(callApi(env, "/consumers/me", tokens.access_token));
    await waitFor(async () => (await armedNow()).held === 1, "the request to be held");
    await resetSandbox(env);
    expect(await request).toBeInstanceOf(TypeError);
    expect((await armedNow()).held).toBe(0);
    expect(await events(env, "?type=api")).toEqual([]);
  });
});

describe("held requests and shutdown", () => {
  it("closing the sandbox releases held requests at once: no timer keeps it open", async () => {
    const own = await startTestSandbox();
    try {
      const tokens = await installAndRedeem(own, 1001);
      await control(own, "POST", "/api-faults", { path: "/", mode: "timeout", forMs: 60_000 });
      await control(own, "POST", "/api-faults", { path: "/charges", mode: "latency", latencyMs: 60_000, count: 1 });
      const held = [transportError(callApi(own, "/consumers/me", tokens.access_token)), transportError(callApi(own, "/teams", tokens.access_token))];
      await waitFor(async () => (await control<{ held: number }>(own, "GET", "/api-faults")).held === 2, "two held requests");
      const started = performance.now();
      await own.running.close();
      expect(performance.now() - started).toBeLessThan(1000);
      expect(own.running.sandbox.ctx.apiFaults.heldCount).toBe(0);
      for (const error of await Promise.all(held)) expect(error).toBeInstanceOf(TypeError);
    } finally {
      await own.close();
    }
  });
});

describe("bad control input", () => {
  it.each([
    [{ path: "/charges", mode: "error500" }, "forMs: give forMs, count or both"],
    [{ path: "/charges", mode: "rate-limited", count: 3 }, 'give forMs, or resetsIn "omit"'],
    [{ path: "/charges", mode: "error500", count: 1, latencyMs: 10 }, "latencyMs applies to mode latency only"],
    [{ path: "/charges", mode: "latency", count: 1, holdMs: 10 }, "holdMs applies to mode timeout only"],
    [{ path: "/charges", mode: "error503", count: 1, resetsIn: "omit" }, "resetsIn applies to mode rate-limited only"],
    [{ path: "/api/v1/charges", mode: "error500", count: 1 }, 'write "/charges", not "/api/v1/charges"'],
    [{ path: "charges", mode: "error500", count: 1 }, "path must be an API path under /api/v1"],
    [{ path: "/charges?page=2", mode: "error500", count: 1 }, "path must be an API path under /api/v1"],
    [{ path: "/charges", mode: "explode", count: 1 }, "mode:"],
    [{ path: "/charges", mode: "error500", count: 0 }, "count:"],
    [{ path: "/charges", mode: "error500", forMs: 3_600_001 }, "forMs:"],
    [{ path: "/charges", mode: "latency", count: 1, latencyMs: 120_001 }, "latencyMs:"],
    [{ path: "/charges", mode: "error500", count: 1, installId: 0 }, "installId:"],
    [{ path: "/charges", mode: "error500", count: 1, extra: true }, "extra"],
    [undefined, "Expected {\"path\""],
  ])("POST %j → 400 naming the problem, nothing armed", async (body, message) => {
    const response = await controlRaw(env, "POST", "/api-faults", body);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: string };
    expect(error).toMatch(/^Expected \{"path": "\/charges", "mode"/);
    expect(error).toContain(message);
    expect((await armedNow()).faults).toEqual([]);
  });
});
