// The authorization endpoint, the portal and the consent page (contract §1–§3).
import { beforeEach, describe, expect, it } from "vitest";
import {
  CLIENT_ID,
  REDIRECT_URI,
  REQUESTED_SCOPES,
  connectAndApprove,
  control,
  locationOf,
  openConsent,
  postForm,
  resetSandbox,
  scopeItemsFrom,
  setUpTestSandbox,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env, { webhooks: true }));

interface InstallView {
  install_id: number;
  operator_id: number;
  status: string;
}

async function signedAuthorizeUrl(operatorId: number, overrides: Record<string, string | null>): Promise<string> {
  return (await control<{ url: string }>(env, "POST", "/authorize-url", { operatorId, overrides })).url;
}

describe("operator portal", () => {
  it("lists the operators as links and shows the app with a Connect form", async () => {
    const picker = await (await fetch(`${env.url}/portal`)).text();
    expect(picker).toContain("Volt sandbox · operator portal");
    expect(picker).toMatch(/<a class="operator-link" href="\/portal\/operators\/1001">Northwind Charging<\/a>/);
    const catalogue = await fetch(`${env.url}/portal/operators/1001`);
    expect(catalogue.headers.get("set-cookie")).toContain("volt_sandbox_operator=1001");
    const html = await catalogue.text();
    expect(html).toContain("Test Partner App");
    expect(html).toMatch(/<form class="inline" method="post" action="\/portal\/operators\/1001\/connect">\s*<button type="submit">Connect<\/button>/);
  });

  it("Connect builds the request: code flow, registered client and redirect_uri, scopes + offline_access, long state", async () => {
    const response = await postForm(`${env.url}/portal/operators/1001/connect`, {});
    expect(response.status).toBe(303);
    const url = new URL(locationOf(response));
    expect(`${url.origin}${url.pathname}`).toBe(`${env.url}/idp/oauth2/auth`);
    expect(url.searchParams.get("response_type")).toBe("code");
    expect(url.searchParams.get("client_id")).toBe(CLIENT_ID);
    expect(url.searchParams.get("redirect_uri")).toBe(REDIRECT_URI);
    expect(url.searchParams.get("scope")).toBe([...REQUESTED_SCOPES, "offline_access"].join(" "));
    expect(url.searchParams.get("state")?.length ?? 0).toBeGreaterThanOrEqual(16);
    expect(url.searchParams.has("code_challenge")).toBe(false);
  });
});

describe("authorization endpoint", () => {
  it("refuses a request an app built itself", async () => {
    const params = new URLSearchParams({ response_type: "code", client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, scope: "charge-points:read offline_access", state: "abcdefghijklmnop" });
    const response = await fetch(`${env.url}/idp/oauth2/auth?${params}`, { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(await response.text()).toContain("Apps must not build authorization URLs");
  });

  it("refuses a portal-built request whose parameters were changed", async () => {
    const connect = await postForm(`${env.url}/portal/operators/1001/connect`, {});
    const url = new URL(locationOf(connect));
    url.searchParams.set("scope", "charge-points:read teams:write offline_access");
    const response = await fetch(url, { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("differ from the ones the portal built");
  });

  it("accepts a portal-built request once only", async () => {
    const connect = await postForm(`${env.url}/portal/operators/1001/connect`, {});
    const authorizeUrl = locationOf(connect);
    expect((await fetch(authorizeUrl, { redirect: "manual" })).status).toBe(302);
    const again = await fetch(authorizeUrl, { redirect: "manual" });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("already used once");
  });

  it("shows an error page, without redirecting, for a redirect_uri that is not registered", async () => {
    const url = await signedAuthorizeUrl(1001, { redirect_uri: "http://localhost:3999/oauth/callback/" });
    const response = await fetch(url, { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(await response.text()).toContain("does not match any of the OAuth 2.0 Client&#39;s pre-registered redirect urls");
  });

  it("rejects code_challenge from this confidential client with an OAuth error redirect (contract §1.7)", async () => {
    const url = await signedAuthorizeUrl(1001, { code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256", state: "state-for-pkce-test" });
    const response = await fetch(url, { redirect: "manual" });
    expect(response.status).toBe(302);
    const target = new URL(locationOf(response));
    expect(`${target.origin}${target.pathname}`).toBe(REDIRECT_URI);
    expect(target.searchParams.get("error")).toBe("invalid_request");
    expect(target.searchParams.get("error_description")).toContain("must not send code_challenge");
    expect(target.searchParams.get("state")).toBe("state-for-pkce-test");
    expect(target.searchParams.has("code")).toBe(false);
  });

  it("rejects a scope the app is not registered for with invalid_scope", async () => {
    const url = await signedAuthorizeUrl(1001, { scope: "charge-points:read teams:write offline_access" });
    const target = new URL(locationOf(await fetch(url, { redirect: "manual" })));
    expect(target.searchParams.get("error")).toBe("invalid_scope");
    expect(target.searchParams.get("error_description")).toBe(
      "The requested scope is invalid, unknown, or malformed. The OAuth 2.0 Client is not allowed to request scope 'teams:write'.",
    );
  });

  it("rejects response_type other than code", async () => {
    const url = await signedAuthorizeUrl(1001, { response_type: "token" });
    const target = new URL(locationOf(await fetch(url, { redirect: "manual" })));
    expect(target.searchParams.get("error")).toBe("unsupported_response_type");
  });
});

describe("consent", () => {
  it("shows the app, the operator and the exact scope list including offline_access, with Approve and Deny", async () => {
    const { html } = await openConsent(env, 1002);
    expect(html).toContain("Test Partner App");
    expect(html).toContain("Fjordline Energy");
    expect(scopeItemsFrom(html)).toEqual([...REQUESTED_SCOPES, "offline_access"]);
    expect(html).toMatch(/<button type="submit" name="decision" value="approve">Approve<\/button>/);
    expect(html).toMatch(/<button type="submit" name="decision" value="deny" class="secondary">Deny<\/button>/);
  });

  it("Deny redirects with access_denied and the state, and creates nothing", async () => {
    const { challenge, authorizeUrl } = await openConsent(env, 1001);
    const state = new URL(authorizeUrl).searchParams.get("state");
    const response = await postForm(`${env.url}/idp/consent`, { consent_challenge: challenge, decision: "deny" });
    const target = new URL(locationOf(response));
    expect(target.searchParams.get("error")).toBe("access_denied");
    expect(target.searchParams.get("error_description")).toContain("denied the request");
    expect(target.searchParams.get("state")).toBe(state);
    expect((await control<{ installs: InstallView[] }>(env, "GET", "/installs")).installs).toEqual([]);
    expect(env.webhooks.received).toHaveLength(0);
  });

  it("Approve creates an active install, sends install.created first, then redirects with code, scope and state", async () => {
    const { challenge, authorizeUrl } = await openConsent(env, 1001);
    const state = new URL(authorizeUrl).searchParams.get("state");
    const response = await postForm(`${env.url}/idp/consent`, { consent_challenge: challenge, decision: "approve" });
    expect(response.status).toBe(302);
    // The webhook was awaited before the redirect was sent.
    expect(env.webhooks.received).toHaveLength(1);
    const target = new URL(locationOf(response));
    expect(`${target.origin}${target.pathname}`).toBe(REDIRECT_URI);
    expect(target.searchParams.get("code")).toMatch(/^volt_ac_/);
    expect(target.searchParams.get("scope")).toBe([...REQUESTED_SCOPES, "offline_access"].join(" "));
    expect(target.searchParams.get("state")).toBe(state);
    const { installs } = await control<{ installs: InstallView[] }>(env, "GET", "/installs");
    expect(installs).toEqual([expect.objectContaining({ install_id: 1, operator_id: 1001, status: "active" })]);
  });

  it("a consent request expires after 30 minutes on the sandbox clock", async () => {
    const { challenge } = await openConsent(env, 1001);
    await control(env, "POST", "/clock/advance", { seconds: 30 * 60 + 1 });
    const response = await postForm(`${env.url}/idp/consent`, { consent_challenge: challenge, decision: "approve" });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("Consent request expired");
  });

  it("Connect on an installed app re-authorizes the same install, without a second install.created", async () => {
    await connectAndApprove(env, 1003);
    const again = await connectAndApprove(env, 1003);
    expect(again.code).toMatch(/^volt_ac_/);
    const { installs } = await control<{ installs: InstallView[] }>(env, "GET", "/installs");
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatchObject({ install_id: 1, status: "active" });
    expect(env.webhooks.received).toHaveLength(1);
  });

  it("install ids only grow and are never reused after an uninstall", async () => {
    await connectAndApprove(env, 1001);
    await connectAndApprove(env, 1002);
    await control(env, "POST", "/installs/2/revoke");
    await connectAndApprove(env, 1002);
    const { installs } = await control<{ installs: InstallView[] }>(env, "GET", "/installs");
    expect(installs.map((i) => [i.install_id, i.operator_id, i.status])).toEqual([
      [1, 1001, "active"],
      [2, 1002, "revoked"],
      [3, 1002, "active"],
    ]);
  });
});
