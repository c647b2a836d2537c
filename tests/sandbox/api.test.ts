// The partner API: introspection on every call, consumer status, re-authorization, scopes, pagination, rate limits.
import { beforeEach, describe, expect, it } from "vitest";
import {
  CLIENT_ID,
  advanceClock,
  callApi,
  control,
  installAndRedeem,
  resetSandbox,
  setUpTestSandbox,
  startTestSandbox,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

interface ListBody<T> {
  data: T[];
  meta: { currentPage: number; perPage: number; itemCount: number; totalPageCount: number; totalItemCount: number };
}

const INVALID_TOKEN_BODY = { status: "UNAUTHORIZED", errorCode: "INVALID_ACCESS_TOKEN", message: "Invalid or expired accessToken", context: {} };

describe("GET /consumers/me", () => {
  it("tells which operator and install a token belongs to", async () => {
    const tokens = await installAndRedeem(env, 1002);
    const response = await callApi(env, "/consumers/me", tokens.access_token);
    expect(response.status).toBe(200);
    const me = (await response.json()) as Record<string, unknown>;
    expect(me).toEqual({
      name: "Test Partner App · Fjordline Energy",
      operatorId: 1002,
      operatorIds: [],
      teamIds: [],
      clientId: CLIENT_ID,
      rateLimit: 1000,
      rateLimitIntervalInSeconds: 60,
      scopes: ["charge-points:read", "charge-transactions:read"],
      createdAt: expect.any(String),
      updatedAt: null,
      installId: 1,
      // A sandbox extra too (README decision 49): the operator's own name, which `name` is not.
      operatorName: "Fjordline Energy",
    });
  });

  it("leaves out the undocumented installId when a test asks for a service that does not send it", async () => {
    const tokens = await installAndRedeem(env, 1002);
    expect(await control(env, "POST", "/consumers/install-id", { include: false })).toEqual({ include: false });
    const me = (await (await callApi(env, "/consumers/me", tokens.access_token)).json()) as Record<string, unknown>;
    expect(me).not.toHaveProperty("installId");
    expect(me.operatorId).toBe(1002);
    await resetSandbox(env);
    const again = await installAndRedeem(env, 1002);
    expect(await (await callApi(env, "/consumers/me", again.access_token)).json()).toHaveProperty("installId", 1);
  });
});

describe("GET /charge-points", () => {
  it("paginates the token's operator's charge points, matching the control API's full list", async () => {
    const tokens = await installAndRedeem(env, 1003);
    const { data: all } = await control<{ data: { id: number }[] }>(env, "GET", "/operators/1003/charge-points");
    expect(all).toHaveLength(41);

    const first = (await (await callApi(env, "/charge-points", tokens.access_token)).json()) as ListBody<{ id: number }>;
    expect(first.meta).toEqual({ currentPage: 0, perPage: 10, itemCount: 10, totalPageCount: 5, totalItemCount: 41 });

    const seen: number[] = [];
    for (let page = 0; page < 5; page += 1) {
      const body = (await (await callApi(env, `/charge-points?page=${page}&perPage=10`, tokens.access_token)).json()) as ListBody<{ id: number }>;
      seen.push(...body.data.map((cp) => cp.id));
    }
    expect(seen).toEqual(all.map((cp) => cp.id));

    const last = (await (await callApi(env, "/charge-points?page=4&perPage=10", tokens.access_token)).json()) as ListBody<{ id: number }>;
    expect(last.meta).toMatchObject({ currentPage: 4, itemCount: 1 });
    const beyond = (await (await callApi(env, "/charge-points?page=9", tokens.access_token)).json()) as ListBody<{ id: number }>;
    expect(beyond.data).toEqual([]);
    const big = (await (await callApi(env, "/charge-points?perPage=100", tokens.access_token)).json()) as ListBody<{ id: number }>;
    expect(big.meta).toMatchObject({ perPage: 100, itemCount: 41, totalPageCount: 1 });
  });

  it("only ever returns the token's own operator's records", async () => {
    const tokens = await installAndRedeem(env, 1002);
    const body = (await (await callApi(env, "/charge-points?perPage=100", tokens.access_token)).json()) as ListBody<{ evseId: string }>;
    expect(body.meta.totalItemCount).toBe(7);
    expect(body.data.every((cp) => cp.evseId.startsWith("NO*FJL*"))).toBe(true);
  });

  it.each(["perPage=0", "perPage=101", "perPage=abc", "page=-1", "page=1.5"])("answers %s with 400 BAD_REQUEST", async (query) => {
    const tokens = await installAndRedeem(env, 1001);
    const response = await callApi(env, `/charge-points?${query}`, tokens.access_token);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: "BAD_REQUEST", errorCode: "BAD_REQUEST" });
  });
});

describe("authentication and authorization", () => {
  it("401 INVALID_ACCESS_TOKEN for a missing, unknown or refresh token", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const missing = await fetch(`${env.url}/api/v1/charge-points`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual(INVALID_TOKEN_BODY);
    const unknown = await callApi(env, "/charge-points", "volt_at_unknown");
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toEqual(INVALID_TOKEN_BODY);
    expect((await callApi(env, "/charge-points", tokens.refresh_token)).status).toBe(401);
  });

  it("401 once the access token's hour is over (sandbox clock)", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await advanceClock(env, 3599);
    expect((await callApi(env, "/consumers/me", tokens.access_token)).status).toBe(200);
    await advanceClock(env, 2);
    const response = await callApi(env, "/consumers/me", tokens.access_token);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual(INVALID_TOKEN_BODY);
  });

  it("403 ACCESS_FORBIDDEN for a scope that was not granted", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const response = await callApi(env, "/teams", tokens.access_token);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ status: "FORBIDDEN", errorCode: "ACCESS_FORBIDDEN" });
  });

  it("GET /charges is allowed by charge-transactions:read", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const body = (await (await callApi(env, "/charges?perPage=5", tokens.access_token)).json()) as ListBody<{ chargePointId: number; currency: { identifier: string } }>;
    expect(body.meta).toMatchObject({ perPage: 5, itemCount: 5, totalItemCount: 36 });
    expect(body.data[0]?.currency.identifier).toBe("EUR");
  });

  it("401 CONSUMER_NOT_FOUND when the install's consumer is disabled", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await control(env, "POST", "/installs/1/consumer", { status: "disabled" });
    const response = await callApi(env, "/consumers/me", tokens.access_token);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ status: "UNAUTHORIZED", errorCode: "CONSUMER_NOT_FOUND" });
  });

  it("403 NEEDS_REAUTH with install_id and reauth_url while flagged; a new consent clears it", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await control(env, "POST", "/installs/1/flag-reauth");
    const response = await callApi(env, "/charge-points", tokens.access_token);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      status: "FORBIDDEN",
      errorCode: "NEEDS_REAUTH",
      message: "Install 1 of Test Partner App must be re-authorized by the operator: the app's scopes were widened.",
      context: { install_id: 1, reauth_url: `${env.url}/portal/reauth/1` },
    });
    await installAndRedeem(env, 1001); // the operator grants consent again (same install)
    expect((await callApi(env, "/charge-points", tokens.access_token)).status).toBe(200);
  });

  it("logs each API call with method, path, install and status", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await callApi(env, "/charge-points?perPage=3", tokens.access_token);
    await callApi(env, "/teams", tokens.access_token);
    const { events } = await control<{ events: { detail: Record<string, unknown> }[] }>(env, "GET", "/events?type=api");
    expect(events.map((e) => e.detail)).toEqual([
      { method: "GET", path: "/api/v1/charge-points?perPage=3", install_id: 1, status: 200, error_code: null },
      { method: "GET", path: "/api/v1/teams", install_id: 1, status: 403, error_code: "ACCESS_FORBIDDEN" },
    ]);
  });
});

describe("rate limits", () => {
  it("sends the rate-limit headers on every answer", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const response = await callApi(env, "/consumers/me", tokens.access_token);
    expect(response.headers.get("ratelimit-policy")).toBe("1000;w=60");
    expect(response.headers.get("ratelimit-quota")).toBe("1000");
    expect(response.headers.get("ratelimit-timewindow")).toBe("60");
    expect(response.headers.get("ratelimit-remaining")).toBe("999");
    expect(Number(response.headers.get("ratelimit-resetsin"))).toBeGreaterThan(0);
  });

  it("answers 429 over the quota, per install, until the window resets", async () => {
    const limited = await startTestSandbox({ rateLimit: { limit: 3, windowSeconds: 60 } });
    try {
      const a = await installAndRedeem(limited, 1001);
      const b = await installAndRedeem(limited, 1002);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await callApi(limited, "/consumers/me", a.access_token)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect((await callApi(limited, "/consumers/me", b.access_token)).status).toBe(200); // another install's budget
      await advanceClock(limited, 61);
      expect((await callApi(limited, "/consumers/me", a.access_token)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
