// Each install's rate budget (contract §8; README decisions 14 and 36): a default for every install (PUT
// /_sandbox/rate-limit), an override per install (PUT /_sandbox/installs/:id/rate-limit), /consumers/me and the
// RateLimit-* headers following the install's own budget, and a fixed window on the sandbox clock that opens at the
// first request after the previous one ended.
import { beforeEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../sandbox/config.js";
import { MINIMAL_SANDBOX_ENV, advanceClock, callApi, control, controlRaw, installAndRedeem, resetSandbox, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

interface InstallRateLimit {
  installId: number;
  limit: number;
  windowSeconds: number;
  source: "default" | "install";
  window: { startedAt: string; count: number; remaining: number; resetsInSeconds: number } | null;
}

interface RateLimitView {
  rateLimit: { limit: number; windowSeconds: number };
  configured: { limit: number; windowSeconds: number };
  overrides: { installId: number; limit: number; windowSeconds: number }[];
}

function rateHeaders(response: Response): Record<string, string | null> {
  return Object.fromEntries(
    ["policy", "quota", "timewindow", "remaining", "resetsin"].map((name) => [name, response.headers.get(`ratelimit-${name}`)]),
  );
}

async function statuses(token: string, n: number, path = "/consumers/me"): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < n; i += 1) result.push((await callApi(env, path, token)).status);
  return result;
}

describe("the default budget (PUT /_sandbox/rate-limit)", () => {
  it("applies to existing and future installs: /consumers/me and every answer's RateLimit-* headers state it", async () => {
    const a = await installAndRedeem(env, 1001);
    const view = await control<RateLimitView>(env, "PUT", "/rate-limit", { limit: 5, windowSeconds: 10 });
    expect(view).toEqual({ rateLimit: { limit: 5, windowSeconds: 10 }, configured: { limit: 1000, windowSeconds: 60 }, overrides: [] });
    expect(await control<RateLimitView>(env, "GET", "/rate-limit")).toEqual(view);

    const me = await callApi(env, "/consumers/me", a.access_token);
    expect(await me.json()).toMatchObject({ rateLimit: 5, rateLimitIntervalInSeconds: 10 });
    expect(rateHeaders(me)).toEqual({ policy: "5;w=10", quota: "5", timewindow: "10", remaining: "4", resetsin: "10" });

    const b = await installAndRedeem(env, 1002); // created after the change
    const list = await callApi(env, "/charge-points?perPage=2", b.access_token);
    expect(list.status).toBe(200);
    expect(rateHeaders(list)).toMatchObject({ policy: "5;w=10", remaining: "4" });
    expect(await (await callApi(env, "/consumers/me", b.access_token)).json()).toMatchObject({ rateLimit: 5, rateLimitIntervalInSeconds: 10 });
  });

  it("POST /_sandbox/reset restores the configured default and drops every override", async () => {
    await installAndRedeem(env, 1001);
    await control(env, "PUT", "/rate-limit", { limit: 7, windowSeconds: 7 });
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 2, windowSeconds: 5 });
    await resetSandbox(env);
    expect(await control<RateLimitView>(env, "GET", "/rate-limit")).toEqual({
      rateLimit: { limit: 1000, windowSeconds: 60 },
      configured: { limit: 1000, windowSeconds: 60 },
      overrides: [],
    });
    const tokens = await installAndRedeem(env, 1001); // install 1 again after the reset
    const me = await callApi(env, "/consumers/me", tokens.access_token);
    expect(await me.json()).toMatchObject({ rateLimit: 1000, rateLimitIntervalInSeconds: 60 });
    expect(rateHeaders(me).policy).toBe("1000;w=60");
  });
});

describe("an install's own budget (PUT /_sandbox/installs/:id/rate-limit)", () => {
  it("overrides the default for that install only; DELETE goes back to the default", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    const set = await control<InstallRateLimit>(env, "PUT", "/installs/1/rate-limit", { limit: 2, windowSeconds: 30 });
    expect(set).toEqual({ installId: 1, limit: 2, windowSeconds: 30, source: "install", window: null });

    expect(await statuses(a.access_token, 3)).toEqual([200, 200, 429]);
    const refused = await callApi(env, "/consumers/me", a.access_token);
    expect(refused.status).toBe(429);
    expect(rateHeaders(refused)).toMatchObject({ policy: "2;w=30", quota: "2", timewindow: "30", remaining: "0" });
    expect(Number(rateHeaders(refused).resetsin)).toBeGreaterThan(0);
    expect(Number(rateHeaders(refused).resetsin)).toBeLessThanOrEqual(30);
    expect(refused.headers.get("retry-after")).toBeNull();

    // The other install keeps the default, untouched by install 1's saturation (contract §8).
    const other = await callApi(env, "/consumers/me", b.access_token);
    expect(other.status).toBe(200);
    expect(await other.json()).toMatchObject({ rateLimit: 1000, rateLimitIntervalInSeconds: 60 });
    expect(rateHeaders(other)).toMatchObject({ policy: "1000;w=60", remaining: "999" });

    expect(await control<InstallRateLimit>(env, "GET", "/installs/1/rate-limit")).toMatchObject({
      source: "install",
      window: { count: 4, remaining: 0, resetsInSeconds: expect.any(Number) },
    });
    expect((await control<RateLimitView>(env, "GET", "/rate-limit")).overrides).toEqual([{ installId: 1, limit: 2, windowSeconds: 30 }]);
    // A new default does not touch an install with its own budget.
    await control(env, "PUT", "/rate-limit", { limit: 50, windowSeconds: 60 });
    expect(await control<InstallRateLimit>(env, "GET", "/installs/1/rate-limit")).toMatchObject({ limit: 2, windowSeconds: 30 });

    const cleared = await control<InstallRateLimit>(env, "DELETE", "/installs/1/rate-limit");
    expect(cleared).toMatchObject({ installId: 1, limit: 50, windowSeconds: 60, source: "default" });
    expect(await (await callApi(env, "/consumers/me", a.access_token)).json()).toMatchObject({ rateLimit: 50, rateLimitIntervalInSeconds: 60 });
  });

  it("a change mid-window applies at once to the window already open: its start and count are kept", async () => {
    const a = await installAndRedeem(env, 1001);
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 5, windowSeconds: 60 });
    expect(await statuses(a.access_token, 3)).toEqual([200, 200, 200]);

    await control(env, "PUT", "/installs/1/rate-limit", { limit: 3, windowSeconds: 60 }); // already spent
    const over = await callApi(env, "/consumers/me", a.access_token);
    expect(over.status).toBe(429);
    expect(rateHeaders(over)).toMatchObject({ policy: "3;w=60", remaining: "0" });

    await control(env, "PUT", "/installs/1/rate-limit", { limit: 10, windowSeconds: 60 }); // 4 counted so far
    const again = await callApi(env, "/consumers/me", a.access_token);
    expect(again.status).toBe(200);
    expect(rateHeaders(again)).toMatchObject({ policy: "10;w=60", remaining: "5" });

    // A shorter window ends the open one as soon as the new length has passed since it started.
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 10, windowSeconds: 2 });
    await advanceClock(env, 2);
    const fresh = await callApi(env, "/consumers/me", a.access_token);
    expect(rateHeaders(fresh)).toMatchObject({ policy: "10;w=2", remaining: "9", resetsin: "2" });
  });
});

describe("the fixed window (decision 14)", () => {
  it("opens at the first request after the previous window ended, on the sandbox clock; refused requests count", async () => {
    const a = await installAndRedeem(env, 1001);
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 2, windowSeconds: 10 });
    expect(await statuses(a.access_token, 3)).toEqual([200, 200, 429]);
    await advanceClock(env, 9);
    const late = await callApi(env, "/consumers/me", a.access_token);
    expect(late.status).toBe(429);
    expect(rateHeaders(late).resetsin).toBe("1");

    await advanceClock(env, 1);
    const first = await callApi(env, "/consumers/me", a.access_token); // a new window opens here, not on a boundary
    expect(first.status).toBe(200);
    expect(rateHeaders(first)).toMatchObject({ remaining: "1", resetsin: "10" });
    await advanceClock(env, 9);
    expect(await statuses(a.access_token, 2)).toEqual([200, 429]); // still the window opened 9 s ago
    await advanceClock(env, 1);
    expect(await statuses(a.access_token, 1)).toEqual([200]);
  });

  it("a client bursting across a window edge is not refused here, but spends twice its budget within one window's span", async () => {
    // The strictest realistic server refuses a client whose budget is exceeded within ANY span; this one counts fixed
    // windows, so the counters' peakInAnyWindow is what catches such a client (tests/sandbox/api-requests.test.ts).
    const a = await installAndRedeem(env, 1001);
    await control(env, "PUT", "/installs/1/rate-limit", { limit: 3, windowSeconds: 10 });
    expect(await statuses(a.access_token, 1)).toEqual([200]);
    await advanceClock(env, 9);
    expect(await statuses(a.access_token, 2)).toEqual([200, 200]);
    await advanceClock(env, 1);
    expect(await statuses(a.access_token, 3)).toEqual([200, 200, 200]);
  });
});

describe("bad control input", () => {
  it.each([
    [{ limit: 0, windowSeconds: 60 }, "limit must be between 1 and 100000"],
    [{ limit: 100_001, windowSeconds: 60 }, "limit must be between 1 and 100000"],
    [{ limit: 1.5, windowSeconds: 60 }, "limit must be an integer"],
    [{ limit: 10, windowSeconds: 0 }, "windowSeconds must be between 1 and 3600"],
    [{ limit: 10, windowSeconds: 3601 }, "windowSeconds must be between 1 and 3600"],
    [{ limit: 10 }, "Expected {\"limit\""],
    [{ limit: 10, windowSeconds: 60, burst: 5 }, "Expected {\"limit\""],
    [{ limit: "10", windowSeconds: 60 }, "Expected {\"limit\""],
    [null, "Expected {\"limit\""],
  ])("PUT /_sandbox/rate-limit %j → 400 naming the problem", async (body, message) => {
    await installAndRedeem(env, 1001);
    for (const path of ["/rate-limit", "/installs/1/rate-limit"]) {
      const response = await controlRaw(env, "PUT", path, body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain(message);
    }
    expect((await control<RateLimitView>(env, "GET", "/rate-limit")).rateLimit).toEqual({ limit: 1000, windowSeconds: 60 });
  });

  it("a body that is not JSON is a 400, an unknown install a 404", async () => {
    const response = await fetch(`${env.url}/_sandbox/rate-limit`, { method: "PUT", headers: { "Content-Type": "application/json" }, body: "{limit" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/^Expected \{"limit": 1-100000, "windowSeconds": 1-3600\}/);
    for (const method of ["GET", "PUT", "DELETE"] as const) {
      const body = method === "PUT" ? { limit: 1, windowSeconds: 1 } : undefined;
      expect((await controlRaw(env, method, "/installs/99/rate-limit", body)).status).toBe(404);
      expect((await controlRaw(env, method, "/installs/abc/rate-limit", body)).status).toBe(404);
    }
  });
});

describe("the configured default (SANDBOX_RATE_LIMIT, SANDBOX_RATE_WINDOW_SECONDS)", () => {
  const base = MINIMAL_SANDBOX_ENV;

  it("is 1,000 per 60 s (contract §8) unless the environment says otherwise, within the control API's ranges", () => {
    expect(loadConfig(base).rateLimit).toEqual({ limit: 1000, windowSeconds: 60 });
    expect(loadConfig({ ...base, SANDBOX_RATE_LIMIT: "120", SANDBOX_RATE_WINDOW_SECONDS: "10" }).rateLimit).toEqual({ limit: 120, windowSeconds: 10 });
    expect(() => loadConfig({ ...base, SANDBOX_RATE_WINDOW_SECONDS: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, SANDBOX_RATE_WINDOW_SECONDS: "3601" })).toThrow(/SANDBOX_RATE_WINDOW_SECONDS/);
    expect(() => loadConfig({ ...base, SANDBOX_RATE_LIMIT: "100001" })).toThrow(/SANDBOX_RATE_LIMIT/);
  });
});
