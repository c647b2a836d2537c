// The token endpoint's authorization_code grant and client authentication, against fosite's wording.
import { beforeEach, describe, expect, it } from "vitest";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  REQUESTED_SCOPES,
  advanceClock,
  callApi,
  connectAndApprove,
  control,
  postForm,
  redeemCode,
  resetSandbox,
  setUpTestSandbox,
  type TokenSet,
} from "./helpers.js";

const INVALID_GRANT =
  "The provided authorization grant (e.g., authorization code, resource owner credentials) or refresh token is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.";
const INVALID_CLIENT = "Client authentication failed (e.g., unknown client, no client authentication included, or unsupported authentication method).";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

describe("authorization_code grant", () => {
  it("redeems a code for opaque bearer tokens with offline_access granted", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const response = await redeemCode(env, code);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("pragma")).toBe("no-cache");
    const body = (await response.json()) as TokenSet;
    expect(body.access_token).toMatch(/^volt_at_[A-Za-z0-9_-]{20,}$/);
    expect(body.refresh_token).toMatch(/^volt_rt_[A-Za-z0-9_-]{20,}$/);
    expect(body.token_type).toBe("bearer");
    expect(body.expires_in).toBe(3599);
    expect(body.scope).toBe([...REQUESTED_SCOPES, "offline_access"].join(" "));
    expect(body.access_token.split(".")).toHaveLength(1); // not a JWT
    expect((await callApi(env, "/consumers/me", body.access_token)).status).toBe(200);
  });

  it("is single use: a second use fails with invalid_grant and revokes the tokens of the first", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const first = (await (await redeemCode(env, code)).json()) as TokenSet;
    const second = await redeemCode(env, code);
    expect(second.status).toBe(400);
    expect(await second.json()).toEqual({ error: "invalid_grant", error_description: `${INVALID_GRANT} The authorization code has already been used.` });
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(401);
    const refresh = await postForm(`${env.url}/idp/oauth2/token`, { grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("expires after one minute on the sandbox clock", async () => {
    const { code } = await connectAndApprove(env, 1001);
    await advanceClock(env, 61);
    const response = await redeemCode(env, code);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "invalid_grant", error_description: INVALID_GRANT });
  });

  it("still works just before the minute is up", async () => {
    const { code } = await connectAndApprove(env, 1001);
    await advanceClock(env, 55);
    expect((await redeemCode(env, code)).status).toBe(200);
  });

  it("requires the exact redirect_uri of the authorization request, and does not burn the code", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const response = await redeemCode(env, code, { redirect_uri: "http://localhost:3999/oauth/callback?x=1" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: "invalid_grant",
      error_description: `${INVALID_GRANT} The "redirect_uri" from this request does not match the one from the authorize request.`,
    });
    expect((await redeemCode(env, code)).status).toBe(200);
  });

  it("rejects a code_verifier, since no code_challenge was ever made", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const response = await redeemCode(env, code, { code_verifier: "a".repeat(43) });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "invalid_grant", error_description: `${INVALID_GRANT} Unable to find initial PKCE data tied to this request` });
  });

  it("answers an unknown code with invalid_grant", async () => {
    const response = await redeemCode(env, "volt_ac_not-a-real-code");
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_grant");
  });
});

describe("client authentication (client_secret_post only)", () => {
  it("unknown client_id → 401 invalid_client, 'does not exist'", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const response = await redeemCode(env, code, { client_id: "someone-else" });
    expect(response.status).toBe(401);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({
      error: "invalid_client",
      error_description: `${INVALID_CLIENT} The requested OAuth 2.0 Client does not exist.`,
    });
  });

  it("wrong secret → 401 invalid_client", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const response = await redeemCode(env, code, { client_secret: "wrong" });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: "invalid_client", error_description: INVALID_CLIENT });
  });

  it("credentials in an Authorization: Basic header → 401 invalid_client naming client_secret_basic", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const basic = Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString("base64");
    const response = await postForm(
      `${env.url}/idp/oauth2/token`,
      { grant_type: "authorization_code", code, redirect_uri: "http://localhost:3999/oauth/callback" },
      { Authorization: `Basic ${basic}` },
    );
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: string; error_description: string };
    expect(body.error).toBe("invalid_client");
    expect(body.error_description).toContain("but method 'client_secret_basic' was requested");
  });
});

describe("request format", () => {
  it("accepts application/x-www-form-urlencoded only", async () => {
    const response = await fetch(`${env.url}/idp/oauth2/token`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ grant_type: "authorization_code", code: "x", client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(((await response.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("answers an unknown grant_type with unsupported_grant_type", async () => {
    const response = await postForm(`${env.url}/idp/oauth2/token`, { grant_type: "client_credentials", client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("unsupported_grant_type");
  });

  it("logs every call with grant type, install and outcome, and never a token, code or secret", async () => {
    const { code } = await connectAndApprove(env, 1001);
    const tokens = (await (await redeemCode(env, code)).json()) as TokenSet;
    await redeemCode(env, code);
    const { events } = await control<{ events: { type: string; detail: Record<string, unknown> }[] }>(env, "GET", "/events?type=token");
    expect(events.map((e) => [e.detail.grant_type, e.detail.install_id, e.detail.outcome])).toEqual([
      ["authorization_code", 1, "issued"],
      ["authorization_code", 1, "invalid_grant"],
    ]);
    const everything = JSON.stringify(await control(env, "GET", "/events"));
    for (const secret of [code, tokens.access_token, tokens.refresh_token, CLIENT_SECRET]) expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/volt_(at|rt|ac)_/);
  });
});
