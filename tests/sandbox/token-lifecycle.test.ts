// Issue 3, the sandbox side: the token lifecycle as the identity provider runs it, and the token-stats control API
// that tests and benchmarks assert on ("exactly 1 refresh and 0 chain revocations").
import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  CLIENT_SECRET,
  advanceClock,
  callApi,
  connectAndApprove,
  control,
  controlRaw,
  events,
  installAndRedeem,
  postForm,
  receivedEnvelopes,
  redeemCode,
  refreshTokens,
  resetSandbox,
  setUpTestSandbox,
  tokenStats,
  type TestEnv,
  type TokenSet,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env, { webhooks: true }));

async function refreshOk(e: TestEnv, refreshToken: string): Promise<TokenSet> {
  const response = await refreshTokens(e, refreshToken);
  expect(response.status).toBe(200);
  return (await response.json()) as TokenSet;
}

describe("rotation", () => {
  it("a refresh revokes EVERY earlier access token of the chain, not only the one issued with the used refresh token", async () => {
    const first = await installAndRedeem(env, 1001);
    const second = await refreshOk(env, first.refresh_token);
    const third = await refreshOk(env, second.refresh_token);
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(401);
    expect((await callApi(env, "/consumers/me", second.access_token)).status).toBe(401);
    expect((await callApi(env, "/consumers/me", third.access_token)).status).toBe(200);
    expect((await tokenStats(env, 1)).active_access_tokens).toBe(1);
  });

  it("the used refresh token is spent; the newest one keeps the chain going", async () => {
    const first = await installAndRedeem(env, 1001);
    const second = await refreshOk(env, first.refresh_token);
    const third = await refreshOk(env, second.refresh_token);
    const fourth = await refreshOk(env, third.refresh_token);
    expect(fourth.scope).toBe(first.scope);
    expect(new Set([first, second, third, fourth].map((t) => t.refresh_token)).size).toBe(4);
  });

  it("an access token dies after one hour, but its refresh token still refreshes", async () => {
    const first = await installAndRedeem(env, 1001);
    await advanceClock(env, 2 * 3600);
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(401);
    const next = await refreshOk(env, first.refresh_token);
    expect((await callApi(env, "/consumers/me", next.access_token)).status).toBe(200);
  });

  it("a refresh token still works just before its 30 days are up, and the new one lives 30 days from its own issue", async () => {
    const first = await installAndRedeem(env, 1001);
    await advanceClock(env, 30 * 24 * 3600 - 60);
    const second = await refreshOk(env, first.refresh_token);
    await advanceClock(env, 29 * 24 * 3600);
    expect((await refreshTokens(env, second.refresh_token)).status).toBe(200);
  });
});

describe("GET /_sandbox/installs/:id/token-stats", () => {
  it("counts calls per grant type and issued refreshes", async () => {
    const first = await installAndRedeem(env, 1001);
    expect(await tokenStats(env, 1)).toEqual({
      install_id: 1,
      calls: { authorization_code: 1, refresh_token: 0 },
      refreshes_issued: 0,
      chain_revocations: 0,
      chain_revoked: false,
      chain_revoked_reason: null,
      active_access_tokens: 1,
    });
    await refreshOk(env, first.refresh_token);
    expect(await tokenStats(env, 1)).toMatchObject({ calls: { authorization_code: 1, refresh_token: 1 }, refreshes_issued: 1, chain_revocations: 0, chain_revoked: false, active_access_tokens: 1 });
  });

  it("a refresh-token reuse is one chain revocation; presenting dead tokens again does not count another", async () => {
    const first = await installAndRedeem(env, 1001);
    const second = await refreshOk(env, first.refresh_token);
    expect((await refreshTokens(env, first.refresh_token)).status).toBe(400); // reuse → chain revoked
    expect((await refreshTokens(env, first.refresh_token)).status).toBe(400); // deleted by the reuse, still counted for install 1
    expect((await refreshTokens(env, second.refresh_token)).status).toBe(400);
    expect(await tokenStats(env, 1)).toEqual({
      install_id: 1,
      calls: { authorization_code: 1, refresh_token: 4 },
      refreshes_issued: 1,
      chain_revocations: 1,
      chain_revoked: true,
      chain_revoked_reason: "refresh_token_reuse",
      active_access_tokens: 0,
    });
  });

  it("a code reuse revokes the chain too (reason code_reuse)", async () => {
    const { code } = await connectAndApprove(env, 1001);
    expect((await redeemCode(env, code)).status).toBe(200);
    expect((await redeemCode(env, code)).status).toBe(400);
    expect(await tokenStats(env, 1)).toMatchObject({ calls: { authorization_code: 2, refresh_token: 0 }, chain_revocations: 1, chain_revoked: true, chain_revoked_reason: "code_reuse" });
  });

  it("chain_revoked follows the install's most recent chain: re-authorizing through Connect starts a live one", async () => {
    const first = await installAndRedeem(env, 1001);
    await refreshOk(env, first.refresh_token);
    await refreshTokens(env, first.refresh_token); // reuse
    expect((await tokenStats(env, 1)).chain_revoked).toBe(true);
    const again = await installAndRedeem(env, 1001); // same install, new chain
    expect((await callApi(env, "/consumers/me", again.access_token)).status).toBe(200);
    expect(await tokenStats(env, 1)).toMatchObject({ chain_revoked: false, chain_revocations: 1, active_access_tokens: 1, calls: { authorization_code: 2 } });
  });

  it("a client revocation (RFC 7009) of the refresh token revokes the chain without counting as a reuse", async () => {
    const first = await installAndRedeem(env, 1001);
    const response = await postForm(`${env.url}/idp/oauth2/revoke`, { token: first.refresh_token, client_id: "test-partner-app", client_secret: CLIENT_SECRET });
    expect(response.status).toBe(200);
    expect(await tokenStats(env, 1)).toMatchObject({ chain_revocations: 0, chain_revoked: true, chain_revoked_reason: "client_revocation", active_access_tokens: 0 });
  });

  it("GET /_sandbox/token-stats sums over all installs and counts calls it could not tie to an install", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    await refreshOk(env, a.refresh_token);
    await refreshOk(env, b.refresh_token);
    await refreshTokens(env, b.refresh_token); // reuse on install 2
    await refreshTokens(env, "volt_rt_unknown"); // unattributed
    expect(await control(env, "GET", "/token-stats")).toEqual({
      installs: 2,
      calls: { authorization_code: 2, refresh_token: 3 },
      refreshes_issued: 2,
      chain_revocations: 1,
      chains_revoked: 1,
      active_access_tokens: 1,
      unattributed_calls: 1,
      refreshes_in_flight: 0,
      max_refreshes_in_flight: 1, // one after the other
    });
  });

  it("answers 404 for an unknown install and survives a restart", async () => {
    expect((await controlRaw(env, "GET", "/installs/99/token-stats")).status).toBe(404);
    const first = await installAndRedeem(env, 1001);
    await refreshOk(env, first.refresh_token);
    await env.restart();
    expect(await tokenStats(env, 1)).toMatchObject({ refreshes_issued: 1, calls: { authorization_code: 1, refresh_token: 1 } });
  });
});

describe("concurrent refreshes are counted as calls, not as refreshes or revocations", () => {
  const slow = setUpTestSandbox({ refreshDelayMs: 100 }, { per: "test" });

  it("two at once: one 200, one invalid_request; 2 calls, 1 refresh, 0 chain revocations", async () => {
    const first = await installAndRedeem(slow, 1001);
    const statuses = (await Promise.all([refreshTokens(slow, first.refresh_token), refreshTokens(slow, first.refresh_token)])).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 400]);
    expect(await tokenStats(slow, 1)).toMatchObject({ calls: { refresh_token: 2 }, refreshes_issued: 1, chain_revocations: 0, chain_revoked: false, active_access_tokens: 1 });
  });
});

describe("uninstall from the portal", () => {
  it("revokes the install, disables its consumer, kills its tokens and sends install.revoked; others and the client are unaffected", async () => {
    const mine = await installAndRedeem(env, 1001);
    const other = await installAndRedeem(env, 1002);
    const page = await postForm(`${env.url}/portal/operators/1001/uninstall`, { install_id: "1" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/portal/operators/1001");

    const { installs } = await control<{ installs: { install_id: number; status: string; consumer_status: string; revoked_at: string | null }[] }>(env, "GET", "/installs");
    expect(installs.map((i) => [i.install_id, i.status, i.consumer_status])).toEqual([
      [1, "revoked", "disabled"],
      [2, "active", "active"],
    ]);
    expect(installs[0]?.revoked_at).toEqual(expect.any(String));
    expect((await callApi(env, "/charge-points", mine.access_token)).status).toBe(401);
    const refresh = await refreshTokens(env, mine.refresh_token);
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
    expect(receivedEnvelopes(env).filter((w) => w.type === "install.revoked")).toEqual([
      expect.objectContaining({ data: { install_id: 1, operator_id: 1001, slug: "northwind-charging" } }),
    ]);
    expect(await tokenStats(env, 1)).toMatchObject({
      calls: { authorization_code: 1, refresh_token: 1 }, // the refresh after the uninstall still counts for install 1
      chain_revoked: true,
      chain_revoked_reason: "install_revoked",
      active_access_tokens: 0,
      chain_revocations: 0,
    });

    // The other install and the app's client credentials keep working.
    expect((await callApi(env, "/charge-points", other.access_token)).status).toBe(200);
    expect((await refreshTokens(env, other.refresh_token)).status).toBe(200);
    expect((await tokenStats(env, 2)).chain_revoked).toBe(false);

    // A re-install gets a new install_id; the old one stays revoked.
    const again = await installAndRedeem(env, 1001);
    const me = (await (await callApi(env, "/consumers/me", again.access_token)).json()) as { installId: number; operatorId: number };
    expect(me).toMatchObject({ installId: 3, operatorId: 1001 });
    expect(receivedEnvelopes(env).filter((w) => w.type === "install.created").map((w) => w.data.install_id)).toEqual([1, 2, 3]);
    // Uninstalling an already revoked install is a 404, and sends nothing.
    const before = env.webhooks.received.length;
    expect((await controlRaw(env, "POST", "/installs/1/revoke")).status).toBe(404);
    expect(env.webhooks.received.length).toBe(before);
  });
});

describe("secrets never reach logs, the event log or the state file", () => {
  it("after codes, refreshes, reuse, faults and a secret re-issue", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const first = (await (await redeemCode(env, code)).json()) as TokenSet;
    const second = await refreshOk(env, first.refresh_token);
    await refreshTokens(env, first.refresh_token);
    await control(env, "POST", "/faults", { tokenEndpoint: { mode: "error500" } });
    await refreshTokens(env, second.refresh_token);
    const { client_secret: rotated } = await control<{ client_secret: string }>(env, "POST", "/clients/rotate-secret");
    await env.running.sandbox.flush();
    const everything = [
      env.logs.join("\n"),
      JSON.stringify(await events(env)),
      JSON.stringify(await control(env, "GET", "/installs")),
      await readFile(path.join(env.config.dataDir, "state.json"), "utf8"),
    ].join("\n");
    for (const secret of [code, first.access_token, first.refresh_token, second.access_token, second.refresh_token, CLIENT_SECRET, rotated]) {
      expect(everything).not.toContain(secret);
    }
    expect(everything).not.toMatch(/volt_(at|rt|ac|cs)_/);
  });
});
