// The portal's "Open" for an installed app (README decision 48): the service builds the authorization
// request as for Connect, and a consent already given is remembered: no consent screen, the same
// install, no install.created. Anything new since (a widened scope list) shows the consent screen.
import { beforeEach, describe, expect, it } from "vitest";
import {
  REQUESTED_SCOPES,
  callApi,
  control,
  events,
  installAndRedeem,
  locationOf,
  postForm,
  redeemCode,
  refreshTokens,
  resetSandbox,
  scopeItemsFrom,
  setUpTestSandbox,
  tokenStats,
  type TokenSet,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env, { webhooks: true }));

/** Portal → Open → the authorization endpoint; returns where the endpoint sends the browser. */
async function open(operatorId: number): Promise<URL> {
  const response = await postForm(`${env.url}/portal/operators/${operatorId}/open`, {});
  expect(response.status).toBe(303);
  const authorize = await fetch(locationOf(response), { redirect: "manual" });
  expect(authorize.status).toBe(302);
  return new URL(locationOf(authorize));
}

function installCreatedCount(): number {
  return env.webhooks.received.filter((w) => JSON.parse(w.rawBody.toString("utf8")).type === "install.created").length;
}

describe("the portal's Open", () => {
  it("is offered only for an installed app", async () => {
    expect(await (await fetch(`${env.url}/portal/operators/1001`)).text()).not.toContain("/portal/operators/1001/open");
    const response = await postForm(`${env.url}/portal/operators/1001/open`, {});
    expect(response.status).toBe(409);
    expect(await response.text()).toContain("not installed");

    await installAndRedeem(env, 1001);
    const html = await (await fetch(`${env.url}/portal/operators/1001`)).text();
    expect(html).toMatch(/<form class="inline" method="post" action="\/portal\/operators\/1001\/open">\s*<button type="submit">Open<\/button>/);
  });

  it("builds the same request as Connect (the app never builds one), and remembers the consent: straight back with a code, same install", async () => {
    const first = await installAndRedeem(env, 1001);
    const [install] = (await control<{ installs: { install_id: number }[] }>(env, "GET", "/installs")).installs;
    const webhooksBefore = installCreatedCount();

    const openRequest = await postForm(`${env.url}/portal/operators/1001/open`, {});
    const authorizeUrl = new URL(locationOf(openRequest));
    expect(authorizeUrl.searchParams.get("scope")).toBe([...REQUESTED_SCOPES, "offline_access"].join(" "));
    expect(authorizeUrl.searchParams.get("portal_ticket")).toBeTruthy();

    const callback = new URL(locationOf(await fetch(authorizeUrl, { redirect: "manual" })));
    expect(`${callback.origin}${callback.pathname}`).toBe("http://localhost:3999/oauth/callback");
    const code = callback.searchParams.get("code")!;
    expect(code).toMatch(/^volt_ac_/);
    expect(callback.searchParams.get("state")).toBe(authorizeUrl.searchParams.get("state"));

    const redeemed = await redeemCode(env, code);
    expect(redeemed.status).toBe(200);
    const second = (await redeemed.json()) as TokenSet;
    const me = await (await callApi(env, "/consumers/me", second.access_token)).json();
    expect(me.installId).toBe(install!.install_id);

    const installs = (await control<{ installs: unknown[] }>(env, "GET", "/installs")).installs;
    expect(installs).toHaveLength(1);
    expect(installCreatedCount()).toBe(webhooksBefore);
    const consent = (await events(env, "?type=consent")).at(-1);
    expect(consent?.detail).toMatchObject({ outcome: "remembered", install_id: install!.install_id });

    // A new grant is a new chain; the first one is the app's to keep or revoke (it still works here).
    expect((await refreshTokens(env, first.refresh_token)).status).toBe(200);
    expect((await refreshTokens(env, second.refresh_token)).status).toBe(200);
    expect((await tokenStats(env, install!.install_id)).chain_revoked).toBe(false);
  });

  it("shows the consent screen when the app asks for a scope not granted before (a flagged install), and approving clears the flag on the same install", async () => {
    await installAndRedeem(env, 1001);
    const widened = [...REQUESTED_SCOPES, "teams:read"];
    await control(env, "POST", "/app/scopes", { scopes: widened });

    const consentUrl = await open(1001);
    expect(consentUrl.pathname).toBe("/idp/consent");
    const html = await (await fetch(consentUrl)).text();
    expect(scopeItemsFrom(html)).toEqual([...widened, "offline_access"]);
    expect(html).toContain("This app is already installed");

    const challenge = /name="consent_challenge" value="([^"]+)"/.exec(html)![1]!;
    const decision = await postForm(`${env.url}/idp/consent`, { consent_challenge: challenge, decision: "approve" });
    const callback = new URL(locationOf(decision));
    expect(callback.searchParams.get("scope")).toBe([...widened, "offline_access"].join(" "));
    const installs = (await control<{ installs: { install_id: number; needs_reauth: boolean }[] }>(env, "GET", "/installs")).installs;
    expect(installs).toHaveLength(1);
    expect(installs[0]!.needs_reauth).toBe(false);
    expect(installCreatedCount()).toBe(1);
  });

  it("after an uninstall there is nothing to open: Connect installs anew", async () => {
    await installAndRedeem(env, 1001);
    const [install] = (await control<{ installs: { install_id: number }[] }>(env, "GET", "/installs")).installs;
    await control(env, "POST", `/installs/${install!.install_id}/revoke`);
    const response = await postForm(`${env.url}/portal/operators/1001/open`, {});
    expect(response.status).toBe(409);
  });
});

describe("GET /consumers/me", () => {
  it("names the operator in an extra operatorName (README decision 49); name stays the consumer's", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const me = await (await callApi(env, "/consumers/me", tokens.access_token)).json();
    expect(me.operatorName).toBe("Northwind Charging");
    expect(me.name).toBe("Test Partner App · Northwind Charging");
  });
});
