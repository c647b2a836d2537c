// Refresh token rotation, reuse detection, concurrency and revocation (contract §3, public-facts "identity provider").
import { beforeEach, describe, expect, it } from "vitest";
import {
  advanceClock,
  callApi,
  control,
  installAndRedeem,
  refreshTokens,
  resetSandbox,
  setUpTestSandbox,
  type TokenSet,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

async function errorOf(response: Response): Promise<{ status: number; error: string; error_description: string }> {
  const body = (await response.json()) as { error: string; error_description: string };
  return { status: response.status, ...body };
}

describe("refresh_token grant", () => {
  it("rotates: a new access AND refresh token, the old access token revoked at once", async () => {
    const first = await installAndRedeem(env, 1001);
    const response = await refreshTokens(env, first.refresh_token);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const second = (await response.json()) as TokenSet;
    expect(second.access_token).toMatch(/^volt_at_/);
    expect(second.refresh_token).toMatch(/^volt_rt_/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.expires_in).toBe(3599);
    expect(second.scope).toBe(first.scope);
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(401);
    expect((await callApi(env, "/consumers/me", second.access_token)).status).toBe(200);
  });

  it("a used refresh token presented again revokes the whole chain", async () => {
    const first = await installAndRedeem(env, 1001);
    const second = (await (await refreshTokens(env, first.refresh_token)).json()) as TokenSet;
    const reuse = await errorOf(await refreshTokens(env, first.refresh_token));
    expect(reuse).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(reuse.error_description).toMatch(/The refresh token was already used\.$/);
    // Every token of the chain is dead, including the newest pair.
    expect((await callApi(env, "/consumers/me", second.access_token)).status).toBe(401);
    expect((await errorOf(await refreshTokens(env, second.refresh_token))).error).toBe("invalid_grant");
  });

  it("does not touch other installs' chains when one chain is revoked", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    await refreshTokens(env, a.refresh_token);
    await refreshTokens(env, a.refresh_token); // reuse → chain of install 1 revoked
    expect((await callApi(env, "/consumers/me", b.access_token)).status).toBe(200);
    expect((await refreshTokens(env, b.refresh_token)).status).toBe(200);
  });

  it("refresh tokens expire after 30 days on the sandbox clock", async () => {
    const first = await installAndRedeem(env, 1001);
    await advanceClock(env, 30 * 24 * 3600 + 1);
    const failure = await errorOf(await refreshTokens(env, first.refresh_token));
    expect(failure).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(failure.error_description).toMatch(/The refresh token expired\.$/);
  });

  it("an unknown refresh token is invalid_grant", async () => {
    const failure = await errorOf(await refreshTokens(env, "volt_rt_made-up"));
    expect(failure).toMatchObject({ status: 400, error: "invalid_grant" });
    expect(failure.error_description).toMatch(/The refresh token is malformed or not valid\.$/);
  });

  it("after an uninstall, refresh fails, the API answers 401, and install.revoked is sent", async () => {
    const tokens = await installAndRedeem(env, 1003);
    const { installs } = await control<{ installs: { install_id: number }[] }>(env, "GET", "/installs");
    const installId = installs[0]?.install_id;
    const before = env.webhooks.received.length;
    await control(env, "POST", `/installs/${installId}/revoke`);
    expect((await callApi(env, "/charge-points", tokens.access_token)).status).toBe(401);
    expect((await errorOf(await refreshTokens(env, tokens.refresh_token))).error).toBe("invalid_grant");
    const revoked = env.webhooks.received.slice(before).map((w) => JSON.parse(w.rawBody.toString("utf8")) as { type: string; data: unknown });
    expect(revoked).toEqual([expect.objectContaining({ type: "install.revoked", data: { install_id: installId, operator_id: 1003, slug: "alpenstrom-mobility" } })]);
  });
});

describe("concurrent refreshes with the same token", () => {
  const slow = setUpTestSandbox({ refreshDelayMs: 150 }, { per: "test" });

  it("one wins, the other gets invalid_request asking to retry; retrying with the same token then revokes the chain", async () => {
    const first = await installAndRedeem(slow, 1001);
    const [a, b] = await Promise.all([refreshTokens(slow, first.refresh_token), refreshTokens(slow, first.refresh_token)]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 400]);
    const loser = a.status === 400 ? a : b;
    const winner = a.status === 200 ? a : b;
    const failure = await errorOf(loser);
    expect(failure.error).toBe("invalid_request");
    expect(failure.error_description).toContain("multiple concurrent requests using the same token");
    const won = (await winner.json()) as TokenSet;
    // The loser retrying with the token it still holds is a reuse: the chain dies, the winner's tokens too.
    expect((await errorOf(await refreshTokens(slow, first.refresh_token))).error).toBe("invalid_grant");
    expect((await callApi(slow, "/consumers/me", won.access_token)).status).toBe(401);
  });
});
