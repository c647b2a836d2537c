// Fault injection at the token endpoint (POST/GET/DELETE /_sandbox/faults), for the app's tests of unknown refresh
// outcomes: a 500 or a dropped connection before anything happened, a slow answer, and "answer-then-fail", where the
// rotation IS committed but the client never sees the answer.
import { beforeEach, describe, expect, it } from "vitest";
import {
  callApi,
  connectAndApprove,
  control,
  controlRaw,
  events,
  installAndRedeem,
  redeemCode,
  refreshTokens,
  resetSandbox,
  setUpTestSandbox,
  tokenStats,
  type TokenSet,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

const SERVER_ERROR = {
  error: "server_error",
  error_description: "The authorization server encountered an unexpected condition that prevented it from fulfilling the request.",
};

/** Resolves to the error a fetch rejected with, or null if it got an answer. */
async function transportError(request: Promise<Response>): Promise<Error | null> {
  try {
    await request;
    return null;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

describe("mode error500", () => {
  it("answers the next refresh with 500 server_error without performing it; the refresh token stays valid", async () => {
    const first = await installAndRedeem(env, 1001);
    const armed = await control<{ tokenEndpoint: Record<string, unknown> }>(env, "POST", "/faults", { tokenEndpoint: { mode: "error500", count: 1 } });
    expect(armed.tokenEndpoint).toEqual({ mode: "error500", grantType: "refresh_token", remaining: 1, delayMs: 0, failWith: null });

    const failed = await refreshTokens(env, first.refresh_token);
    expect(failed.status).toBe(500);
    expect(failed.headers.get("cache-control")).toBe("no-store");
    expect(await failed.json()).toEqual(SERVER_ERROR);
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(200); // nothing rotated

    expect((await control<{ tokenEndpoint: unknown }>(env, "GET", "/faults")).tokenEndpoint).toBeNull();
    expect((await refreshTokens(env, first.refresh_token)).status).toBe(200); // same token, no reuse
    expect(await tokenStats(env, 1)).toMatchObject({ calls: { refresh_token: 2 }, refreshes_issued: 1, chain_revocations: 0, chain_revoked: false });
    const logged = (await events(env, "?type=token")).map((e) => [e.detail.grant_type, e.detail.outcome, e.detail.status, e.detail.fault]);
    expect(logged).toEqual([
      ["authorization_code", "issued", 200, null],
      ["refresh_token", "not_performed", 500, "error500"],
      ["refresh_token", "issued", 200, null],
    ]);
  });

  it("count N affects exactly the next N refresh calls, and no authorization_code call", async () => {
    const { code } = await connectAndApprove(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "error500", count: 2 } });
    const tokens = (await (await redeemCode(env, code)).json()) as TokenSet; // not a refresh: unaffected
    expect(tokens.access_token).toMatch(/^volt_at_/);
    expect((await refreshTokens(env, tokens.refresh_token)).status).toBe(500);
    expect((await control<{ tokenEndpoint: { remaining: number } }>(env, "GET", "/faults")).tokenEndpoint.remaining).toBe(1);
    expect((await refreshTokens(env, tokens.refresh_token)).status).toBe(500);
    expect((await refreshTokens(env, tokens.refresh_token)).status).toBe(200);
  });

  it("grantType authorization_code targets code redemption instead; the code stays usable", async () => {
    const { code } = await connectAndApprove(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "error500", grantType: "authorization_code" } });
    expect((await redeemCode(env, code)).status).toBe(500);
    expect((await redeemCode(env, code)).status).toBe(200);
  });
});

describe("mode drop-connection", () => {
  it("closes the connection without an answer and without performing the refresh", async () => {
    const first = await installAndRedeem(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "drop-connection" } });
    const error = await transportError(refreshTokens(env, first.refresh_token));
    expect(error).toBeInstanceOf(TypeError); // fetch failed: the other side closed
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(200);
    expect((await refreshTokens(env, first.refresh_token)).status).toBe(200);
    expect((await events(env, "?type=token")).map((e) => [e.detail.outcome, e.detail.status, e.detail.fault])).toContainEqual(["not_performed", null, "drop-connection"]);
  });
});

describe("mode answer-then-fail", () => {
  it("commits the rotation, then answers 500: the old refresh token is spent and re-sending it revokes the chain", async () => {
    const first = await installAndRedeem(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "answer-then-fail" } });
    const failed = await refreshTokens(env, first.refresh_token);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual(SERVER_ERROR);
    // The rotation happened: the old access token is revoked, the old refresh token is used.
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(401);
    expect(await tokenStats(env, 1)).toMatchObject({ refreshes_issued: 1, chain_revoked: false, active_access_tokens: 1 });
    const retry = await refreshTokens(env, first.refresh_token);
    expect(retry.status).toBe(400);
    expect(((await retry.json()) as { error: string }).error).toBe("invalid_grant");
    expect(await tokenStats(env, 1)).toMatchObject({ calls: { refresh_token: 2 }, refreshes_issued: 1, chain_revocations: 1, chain_revoked: true, active_access_tokens: 0 });
    const logged = (await events(env, "?type=token")).map((e) => [e.detail.outcome, e.detail.status, e.detail.fault]);
    expect(logged).toContainEqual(["issued", 500, "answer-then-fail:error500"]);
  });

  it("failWith drop-connection: the rotation is committed and the connection closes without an answer", async () => {
    const first = await installAndRedeem(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "answer-then-fail", failWith: "drop-connection" } });
    expect(await transportError(refreshTokens(env, first.refresh_token))).toBeInstanceOf(TypeError);
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(401);
    expect(await tokenStats(env, 1)).toMatchObject({ refreshes_issued: 1, chain_revoked: false });
  });
});

describe("mode delay", () => {
  it("answers late, holding the token in flight: a second refresh meanwhile gets invalid_request", async () => {
    const first = await installAndRedeem(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "delay", delayMs: 300 } });
    const started = Date.now();
    const slow = refreshTokens(env, first.refresh_token);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const concurrent = await refreshTokens(env, first.refresh_token);
    expect(concurrent.status).toBe(400);
    expect(((await concurrent.json()) as { error_description: string }).error_description).toContain("multiple concurrent requests using the same token");
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(await tokenStats(env, 1)).toMatchObject({ calls: { refresh_token: 2 }, refreshes_issued: 1, chain_revocations: 0 });
  });

  it("a client that gives up during the delay does not stop the rotation (the outcome is unknown to it)", async () => {
    const first = await installAndRedeem(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "delay", delayMs: 300 } });
    const aborted = await transportError(
      fetch(`${env.url}/idp/oauth2/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: "test-partner-app", client_secret: "test-client-secret-0123456789" }).toString(),
        signal: AbortSignal.timeout(50),
      }),
    );
    expect(aborted?.name).toBe("TimeoutError");
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await tokenStats(env, 1)).toMatchObject({ refreshes_issued: 1 });
    expect((await refreshTokens(env, first.refresh_token)).status).toBe(400); // a blind retry is a reuse
  });

  it("defaults to 1000 ms when delayMs is not given", async () => {
    const armed = await control<{ tokenEndpoint: { delayMs: number } }>(env, "POST", "/faults", { tokenEndpoint: { mode: "delay" } });
    expect(armed.tokenEndpoint.delayMs).toBe(1000);
  });
});

describe("the faults control API", () => {
  it.each([
    [{}],
    [{ tokenEndpoint: { mode: "explode" } }],
    [{ tokenEndpoint: { mode: "error500", count: 0 } }],
    [{ tokenEndpoint: { mode: "error500", failWith: "drop-connection" } }],
    [{ tokenEndpoint: { mode: "delay", delayMs: -5 } }],
    [{ tokenEndpoint: { mode: "delay", extra: true } }],
  ])("rejects %j with 400", async (body) => {
    const response = await controlRaw(env, "POST", "/faults", body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toContain("tokenEndpoint");
  });

  it("DELETE clears an armed fault; reset clears it too", async () => {
    const first = await installAndRedeem(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "error500", count: 5 } });
    expect(await control(env, "DELETE", "/faults")).toEqual({ tokenEndpoint: null });
    expect((await refreshTokens(env, first.refresh_token)).status).toBe(200);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "error500", count: 5 } });
    await control(env, "POST", "/reset");
    expect((await control<{ tokenEndpoint: unknown }>(env, "GET", "/faults")).tokenEndpoint).toBeNull();
  });

  it("the sandbox keeps serving after dropped connections", async () => {
    const first = await installAndRedeem(env, 1001);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "drop-connection", count: 3 } });
    for (let i = 0; i < 3; i += 1) expect(await transportError(refreshTokens(env, first.refresh_token))).toBeInstanceOf(TypeError);
    expect((await control<{ ok: boolean }>(env, "GET", "/health")).ok).toBe(true);
    expect((await refreshTokens(env, first.refresh_token)).status).toBe(200);
  });
});
