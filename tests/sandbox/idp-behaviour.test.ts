// POST /_sandbox/idp-behaviour: the switches that make the identity provider behave like another
// standards-compliant server than Hydra, or like one that is away. Defaults are Hydra's behaviour.
import { beforeEach, describe, expect, it } from "vitest";
import {
  CLIENT_ID,
  CLIENT_SECRET,
  REQUESTED_SCOPES,
  advanceClock,
  callApi,
  connectAndApprove,
  control,
  controlRaw,
  installAndRedeem,
  openConsent,
  postForm,
  redeemCode,
  refreshTokens,
  resetSandbox,
  setUpTestSandbox,
  tokenStats,
  type TokenSet,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

const setBehaviour = (patch: Record<string, unknown>) => control(env, "POST", "/idp-behaviour", patch);
const discovery = () => fetch(`${env.url}/idp/.well-known/openid-configuration`);

describe("the control endpoint", () => {
  it("shows Hydra's behaviour by default, changes only the fields given, and reset restores it", async () => {
    const defaults = {
      discovery: "up",
      errorWording: "hydra",
      iss: "send",
      omitScope: false,
      omitExpiresIn: false,
      sharedGrant: false,
      oldAccessTokensStayValid: false,
    };
    expect(await control(env, "GET", "/idp-behaviour")).toEqual({ idpBehaviour: defaults });
    expect(await setBehaviour({ iss: "omit" })).toEqual({ idpBehaviour: { ...defaults, iss: "omit" } });
    expect(await setBehaviour({ sharedGrant: true, oldAccessTokensStayValid: true })).toEqual({
      idpBehaviour: { ...defaults, iss: "omit", sharedGrant: true, oldAccessTokensStayValid: true },
    });
    await resetSandbox(env);
    expect(await control(env, "GET", "/idp-behaviour")).toEqual({ idpBehaviour: defaults });
  });

  it("refuses unknown fields and values with 400", async () => {
    expect((await controlRaw(env, "POST", "/idp-behaviour", { iss: "sometimes" })).status).toBe(400);
    expect((await controlRaw(env, "POST", "/idp-behaviour", { wording: "generic" })).status).toBe(400);
    expect((await controlRaw(env, "POST", "/idp-behaviour", "not json")).status).toBe(400);
    expect((await controlRaw(env, "POST", "/idp-behaviour", { sharedGrant: "yes" })).status).toBe(400);
  });
});

describe("discovery down", () => {
  it("answers 503 or 404 while switched, the document again once back up", async () => {
    await setBehaviour({ discovery: "503" });
    expect((await discovery()).status).toBe(503);
    await setBehaviour({ discovery: "404" });
    expect((await discovery()).status).toBe(404);
    await setBehaviour({ discovery: "up" });
    expect((await discovery()).status).toBe(200);
  });
});

describe("RFC 9207 iss in the authorization response", () => {
  it("is advertised, and sent with the code by default (as Hydra does)", async () => {
    expect(((await (await discovery()).json()) as Record<string, unknown>).authorization_response_iss_parameter_supported).toBe(true);
    const { url } = await connectAndApprove(env, 1001);
    expect(url.searchParams.get("iss")).toBe(`${env.url}/idp`);
  });

  it("is sent with an error response too (the operator declined)", async () => {
    const { challenge } = await openConsent(env, 1001);
    const denied = new URL((await postForm(`${env.url}/idp/consent`, { consent_challenge: challenge, decision: "deny" })).headers.get("location")!);
    expect(denied.searchParams.get("error")).toBe("access_denied");
    expect(denied.searchParams.get("iss")).toBe(`${env.url}/idp`);
  });

  it("can be left out (still advertised) or be another issuer's", async () => {
    await setBehaviour({ iss: "omit" });
    const omitted = await connectAndApprove(env, 1001);
    expect(omitted.url.searchParams.has("iss")).toBe(false);
    expect(omitted.code).not.toBe("");
    expect(((await (await discovery()).json()) as Record<string, unknown>).authorization_response_iss_parameter_supported).toBe(true);

    await setBehaviour({ iss: "wrong" });
    const wrong = await connectAndApprove(env, 1002);
    expect(wrong.url.searchParams.get("iss")).not.toBe(`${env.url}/idp`);
    expect(wrong.url.searchParams.get("iss")).toMatch(/^https:\/\//);
  });
});

describe("error wording like another server", () => {
  it("answers every invalid_grant cause with the RFC 6749 code and one text nobody can match on", async () => {
    await setBehaviour({ errorWording: "generic" });
    const expected = { error: "invalid_grant", error_description: "The request was refused." };

    const mismatch = await connectAndApprove(env, 1001);
    const wrongRedirect = await redeemCode(env, mismatch.code, { redirect_uri: "http://localhost:3999/other" });
    expect(wrongRedirect.status).toBe(400);
    expect(await wrongRedirect.json()).toEqual(expected);

    const reused = await connectAndApprove(env, 1002);
    expect((await redeemCode(env, reused.code)).status).toBe(200);
    expect(await (await redeemCode(env, reused.code)).json()).toEqual(expected);

    const expired = await connectAndApprove(env, 1003);
    await advanceClock(env, 61);
    expect(await (await redeemCode(env, expired.code)).json()).toEqual(expected);

    expect(await (await redeemCode(env, "volt_ac_unknown")).json()).toEqual(expected);
  });
});

describe("token responses without optional fields", () => {
  it("leave out scope and expires_in, for both grants, when switched", async () => {
    await setBehaviour({ omitScope: true, omitExpiresIn: true });
    const first = await installAndRedeem(env, 1001);
    expect(first).not.toHaveProperty("scope");
    expect(first).not.toHaveProperty("expires_in");
    expect(first.access_token).toMatch(/^volt_at_/);

    const refreshed = (await (await refreshTokens(env, first.refresh_token)).json()) as TokenSet;
    expect(refreshed).not.toHaveProperty("scope");
    expect(refreshed).not.toHaveProperty("expires_in");
    expect(refreshed.refresh_token).toMatch(/^volt_rt_/);

    await setBehaviour({ omitScope: false, omitExpiresIn: false });
    const full = (await (await refreshTokens(env, refreshed.refresh_token)).json()) as TokenSet;
    expect(full.scope).toBe([...REQUESTED_SCOPES, "offline_access"].join(" "));
    expect(full.expires_in).toBe(3599);
  });
});

/** RFC 7009 at the revocation endpoint, as a client revokes a refresh token it no longer wants. */
const revoke = (token: string) => postForm(`${env.url}/idp/oauth2/revoke`, { token, client_id: CLIENT_ID, client_secret: CLIENT_SECRET });

describe("consents that share one grant (decision 54)", () => {
  it("by default (Hydra) a second consent starts its own chain: revoking the first refresh token leaves the new pair alive", async () => {
    const first = await installAndRedeem(env, 1001);
    const second = await installAndRedeem(env, 1001); // Connect again: same install, a new code
    expect((await revoke(first.refresh_token)).status).toBe(200);
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(401);
    expect((await callApi(env, "/consumers/me", second.access_token)).status).toBe(200);
    expect((await refreshTokens(env, second.refresh_token)).status).toBe(200);
    expect(await tokenStats(env, 1)).toMatchObject({ chain_revoked: false, chain_revocations: 0 });
  });

  it("switched on, a second consent joins the live grant: revoking the first refresh token ends the new pair too", async () => {
    await setBehaviour({ sharedGrant: true });
    const first = await installAndRedeem(env, 1001);
    const second = await installAndRedeem(env, 1001);
    // Before any revocation, both pairs work: one grant, two consents.
    expect((await callApi(env, "/consumers/me", first.access_token)).status).toBe(200);
    expect((await callApi(env, "/consumers/me", second.access_token)).status).toBe(200);
    expect((await revoke(first.refresh_token)).status).toBe(200);
    expect((await callApi(env, "/consumers/me", second.access_token)).status).toBe(401);
    const refresh = await refreshTokens(env, second.refresh_token);
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
    expect(await tokenStats(env, 1)).toMatchObject({ chain_revoked: true, chain_revoked_reason: "client_revocation", active_access_tokens: 0 });
  });

  it("switched on, a consent after the grant was revoked starts a new chain (a revoked grant is never joined)", async () => {
    await setBehaviour({ sharedGrant: true });
    const first = await installAndRedeem(env, 1001);
    await revoke(first.refresh_token);
    const again = await installAndRedeem(env, 1001);
    expect((await callApi(env, "/consumers/me", again.access_token)).status).toBe(200);
    expect(await tokenStats(env, 1)).toMatchObject({ chain_revoked: false, active_access_tokens: 1 });
  });
});

describe("earlier access tokens after a refresh (decision 55)", () => {
  it("by default (Hydra) a refresh revokes the earlier access token; switched on, it works until it expires", async () => {
    const hydra = await installAndRedeem(env, 1001);
    expect((await refreshTokens(env, hydra.refresh_token)).status).toBe(200);
    expect((await callApi(env, "/consumers/me", hydra.access_token)).status).toBe(401);

    await setBehaviour({ oldAccessTokensStayValid: true });
    const other = await installAndRedeem(env, 1002);
    const refreshed = (await (await refreshTokens(env, other.refresh_token)).json()) as TokenSet;
    expect((await callApi(env, "/consumers/me", other.access_token)).status).toBe(200);
    expect((await callApi(env, "/consumers/me", refreshed.access_token)).status).toBe(200);
    // The refresh token is spent all the same: presenting it again is a reuse, and the chain ends.
    expect((await refreshTokens(env, other.refresh_token)).status).toBe(400);
    expect((await callApi(env, "/consumers/me", other.access_token)).status).toBe(401);
    expect(await tokenStats(env, 2)).toMatchObject({ chain_revocations: 1, chain_revoked_reason: "refresh_token_reuse" });
    const last = await installAndRedeem(env, 1003);
    await refreshTokens(env, last.refresh_token);
    await advanceClock(env, 3601);
    expect((await callApi(env, "/consumers/me", last.access_token)).status).toBe(401); // expired: its hour is up
  });
});
