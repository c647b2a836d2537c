// The app's client at the identity provider: re-issue (rotates the secret), removal ("does not exist") and restore.
import { beforeEach, describe, expect, it } from "vitest";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  callApi,
  connectAndApprove,
  control,
  controlRaw,
  events,
  installAndRedeem,
  openConsent,
  postForm,
  redeemCode,
  refreshTokens,
  resetSandbox,
  setUpTestSandbox,
} from "./helpers.js";

const INVALID_CLIENT = "Client authentication failed (e.g., unknown client, no client authentication included, or unsupported authentication method).";
const DOES_NOT_EXIST = { error: "invalid_client", error_description: `${INVALID_CLIENT} The requested OAuth 2.0 Client does not exist.` };

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

function refreshWith(refreshToken: string, secret: string): Promise<Response> {
  return postForm(`${env.url}/idp/oauth2/token`, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: CLIENT_ID, client_secret: secret });
}

describe("POST /_sandbox/clients/rotate-secret", () => {
  it("returns a new secret; the old one fails at once with invalid_client; tokens already issued keep working", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const { client_id, client_secret } = await control<{ client_id: string; client_secret: string }>(env, "POST", "/clients/rotate-secret");
    expect(client_id).toBe(CLIENT_ID);
    expect(client_secret).toMatch(/^volt_cs_[A-Za-z0-9_-]{40,}$/);

    const old = await refreshTokens(env, tokens.refresh_token);
    expect(old.status).toBe(401);
    expect(old.headers.get("cache-control")).toBe("no-store");
    expect(await old.json()).toEqual({ error: "invalid_client", error_description: INVALID_CLIENT });
    expect((await callApi(env, "/consumers/me", tokens.access_token)).status).toBe(200);
    // The failed call did not touch the refresh token: with the new secret it rotates normally.
    expect((await refreshWith(tokens.refresh_token, client_secret)).status).toBe(200);
    expect((await control<{ client: { secret: string; exists: boolean } }>(env, "GET", "/clients")).client).toMatchObject({ secret: "re-issued", exists: true });
  });

  it("accepts a chosen secret (≥ 16 characters) and refuses a short one", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const chosen = "a-test-chosen-secret-123";
    expect((await control<{ client_secret: string }>(env, "POST", "/clients/rotate-secret", { client_secret: chosen })).client_secret).toBe(chosen);
    expect((await refreshWith(tokens.refresh_token, chosen)).status).toBe(200);
    expect((await controlRaw(env, "POST", "/clients/rotate-secret", { client_secret: "short" })).status).toBe(400);
  });

  it("never writes the new secret to the event log or the log lines", async () => {
    const { client_secret } = await control<{ client_secret: string }>(env, "POST", "/clients/rotate-secret");
    const logged = (await events(env)).filter((e) => e.detail.action === "client_secret_rotated");
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(await events(env))).not.toContain(client_secret);
    expect(env.logs.join("\n")).not.toContain(client_secret);
  });

  it("the new secret survives a restart; reset goes back to the configured one", async () => {
    const { client_secret } = await control<{ client_secret: string }>(env, "POST", "/clients/rotate-secret");
    await env.restart();
    const { code } = await connectAndApprove(env, 1001);
    expect((await redeemCode(env, code)).status).toBe(401);
    expect((await redeemCode(env, code, { client_secret })).status).toBe(200);
    await control(env, "POST", "/reset");
    const again = await connectAndApprove(env, 1001);
    expect((await redeemCode(env, again.code)).status).toBe(200);
  });
});

describe("POST /_sandbox/clients/remove and /restore", () => {
  it("a removed client gets invalid_client 'does not exist' even with the right secret, and its tokens stop working", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const { code } = await connectAndApprove(env, 1002);
    expect((await control<{ client: { exists: boolean } }>(env, "POST", "/clients/remove")).client.exists).toBe(false);

    const refresh = await refreshTokens(env, tokens.refresh_token);
    expect(refresh.status).toBe(401);
    expect(await refresh.json()).toEqual(DOES_NOT_EXIST);
    const redeem = await redeemCode(env, code);
    expect(redeem.status).toBe(401);
    expect(await redeem.json()).toEqual(DOES_NOT_EXIST);
    expect((await callApi(env, "/consumers/me", tokens.access_token)).status).toBe(401);
  });

  it("Connect on a removed client ends on the authorization endpoint's invalid_client page", async () => {
    await control(env, "POST", "/clients/remove");
    const connect = await postForm(`${env.url}/portal/operators/1001/connect`, {});
    const page = await fetch(connect.headers.get("location") ?? "", { redirect: "manual" });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("The requested OAuth 2.0 Client does not exist.");
  });

  it("restore brings the client back with the configured secret; the tokens work again", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await control(env, "POST", "/clients/rotate-secret");
    await control(env, "POST", "/clients/remove");
    const restored = await control<{ client: { exists: boolean; secret: string } }>(env, "POST", "/clients/restore");
    expect(restored.client).toMatchObject({ exists: true, secret: "configured" });
    expect((await callApi(env, "/consumers/me", tokens.access_token)).status).toBe(200);
    expect((await refreshWith(tokens.refresh_token, CLIENT_SECRET)).status).toBe(200);
  });

  it("re-issuing a removed client registers it again with a new secret (the contract's fix for 'does not exist')", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await control(env, "POST", "/clients/remove");
    const { client_secret } = await control<{ client_secret: string }>(env, "POST", "/clients/rotate-secret");
    expect((await refreshWith(tokens.refresh_token, CLIENT_SECRET)).status).toBe(401);
    expect((await refreshWith(tokens.refresh_token, client_secret)).status).toBe(200);
  });

  it("a removed client's consent still opens no consent page; the portal itself keeps working", async () => {
    await control(env, "POST", "/clients/remove");
    expect((await fetch(`${env.url}/portal/operators/1001`)).status).toBe(200);
    await control(env, "POST", "/clients/restore");
    const { challenge } = await openConsent(env, 1001);
    expect(challenge.length).toBeGreaterThan(10);
  });
});

describe("rotate-secret input", () => {
  it("refuses a body that is not JSON, and unknown fields", async () => {
    const notJson = await fetch(`${env.url}/_sandbox/clients/rotate-secret`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{nope" });
    expect(notJson.status).toBe(400);
    expect((await controlRaw(env, "POST", "/clients/rotate-secret", { secret: "x".repeat(20) })).status).toBe(400);
    expect((await control<{ client: { secret: string } }>(env, "GET", "/clients")).client.secret).toBe("configured");
  });
});
