// The console's handshake page (README decision 52): every request of an install handshake in order, who sent it,
// what the service checked with a mark per check, what it did and answered; a failed handshake shows the failing
// check; no token, code or secret ever reaches the page or the event log.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  CLIENT_SECRET,
  WEBHOOK_SECRET,
  callApi,
  challengeFrom,
  control,
  controlRaw,
  events,
  locationOf,
  postForm,
  redeemCode,
  resetSandbox,
  setUpTestSandbox,
  type TokenSet,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env, { webhooks: true }));

function decode(text: string): string {
  return text.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

interface ShownStep {
  caller: string;
  failed: boolean;
  request: string;
  checks: { passed: boolean; text: string }[];
}

/** The steps of the handshake a page shows, in page order (the redirect note left out). */
function stepsOf(page: string): ShownStep[] {
  const list = /<ol class="steps"[^>]*>([\s\S]*?)<\/ol>/.exec(page)?.[1] ?? "";
  return list
    .split(/(?=<li class="step)/)
    .filter((chunk) => chunk.startsWith('<li class="step') && !chunk.startsWith('<li class="step note'))
    .map((chunk) => ({
      caller: /data-caller="([^"]+)"/.exec(chunk)?.[1] ?? "",
      failed: /data-failed="true"/.test(chunk),
      request: decode(/<code class="request">([^<]*)<\/code>/.exec(chunk)?.[1] ?? ""),
      checks: [...chunk.matchAll(/<li data-check="(pass|fail)">[\s\S]*?<span class="sr">[^<]*<\/span>([\s\S]*?)<\/li>/g)].map((m) => ({
        passed: m[1] === "pass",
        text: decode(m[2] ?? ""),
      })),
    }));
}

async function page(query = ""): Promise<{ status: number; html: string }> {
  const response = await fetch(`${env.url}/console/handshake${query}`);
  return { status: response.status, html: await response.text() };
}

/** Portal → Connect → authorize → consent page → Approve, as a browser: returns the callback URL and the values seen. */
async function connectThroughPortal(operatorId: number): Promise<{ callback: URL; authorizeUrl: URL; challenge: string }> {
  const connect = await postForm(`${env.url}/portal/operators/${operatorId}/connect`, {});
  const authorizeUrl = new URL(locationOf(connect));
  const consentUrl = locationOf(await fetch(authorizeUrl, { redirect: "manual" }));
  const challenge = challengeFrom(await (await fetch(consentUrl)).text());
  const decision = await postForm(`${env.url}/idp/consent`, { consent_challenge: challenge, decision: "approve" });
  return { callback: new URL(locationOf(decision)), authorizeUrl, challenge };
}

/** The app's side: redeem the code, then ask whose token it is. */
async function appSide(code: string): Promise<TokenSet> {
  const redeemed = await redeemCode(env, code);
  expect(redeemed.status).toBe(200);
  const tokens = (await redeemed.json()) as TokenSet;
  expect((await callApi(env, "/consumers/me", tokens.access_token)).status).toBe(200);
  return tokens;
}

describe("the handshake page", () => {
  it("after a full install lists each request in order, who sent it, and its checks", async () => {
    const { callback } = await connectThroughPortal(1001);
    await appSide(callback.searchParams.get("code") ?? "");

    const { status, html } = await page("?install_id=1");
    expect(status).toBe(200);
    expect(html).toContain('data-status="completed"');
    const steps = stepsOf(html);
    expect(steps.map((s) => [s.caller, s.request])).toEqual([
      ["browser", "POST /portal/operators/1001/connect"],
      ["browser", "GET /idp/oauth2/auth"],
      ["browser", "GET /idp/consent"],
      ["browser", "POST /idp/consent"],
      ["service", `POST ${env.webhooks.url}`],
      ["app", "POST /idp/oauth2/token"],
      ["app", "GET /api/v1/consumers/me"],
    ]);
    expect(steps.every((s) => !s.failed && s.checks.every((c) => c.passed))).toBe(true);
    const [portal, authorize, consentPage, decision, webhook, token, me] = steps;
    expect(portal?.checks.map((c) => c.text)).toEqual([expect.stringContaining("operator known: Northwind Charging")]);
    expect(authorize?.checks.map((c) => c.text)).toEqual([
      expect.stringContaining("built by the operator portal"),
      "client_id is the registered client, and the client exists",
      "redirect_uri equals the registered one exactly",
      "response_type is code",
      "state has at least 8 characters",
      "no code_challenge (this confidential client uses no PKCE)",
      "every scope asked for is one the app registered",
    ]);
    expect(consentPage?.checks.map((c) => c.text)).toContain("the consent request has not expired (30 minutes)");
    expect(decision?.checks.map((c) => c.text)).toContain("the consent request was not answered before");
    expect(webhook?.checks.map((c) => c.text)).toEqual(["the app answered 2xx within 10000 ms"]);
    expect(token?.checks.map((c) => c.text)).toEqual([
      "the body is application/x-www-form-urlencoded",
      "grant_type is present",
      "client authentication method is client_secret_post (credentials in the form, no Authorization: Basic)",
      "client_id is the registered client, and the client exists",
      "client_secret matches the registered one",
      "the code is known",
      "the code was not used before (single use)",
      "the code has not expired (lives 60 s)",
      "client_id is the one the code was issued to",
      "redirect_uri equals the one of the authorization request",
      "no code_verifier (no PKCE was started)",
      "the install is active",
    ]);
    expect(me?.checks.map((c) => c.text)).toEqual([
      "Authorization: Bearer <access token> is present",
      "the access token is known, active and unexpired (introspected on every call)",
      "the app's client is still registered",
      "the install is active",
      "within the install's rate budget (1000 per 60 s)",
      "the install's consumer is active",
      "the install is not flagged for re-authorization (NEEDS_REAUTH)",
    ]);
    // What was issued, by lifetime; the unseen redirect to the app between the consent and the redemption.
    expect(html).toContain("authorization code issued: lives 60 s, single use");
    expect(html).toContain("access token issued: expires_in 3599 (lives 3600 s)");
    expect(html).toContain("signed: X-Volt-Signature: sha256=&lt;hex HMAC-SHA256 of the exact body bytes, key WEBHOOK_SECRET&gt;");
    expect(html).toMatch(/data-note="redirect"[\s\S]*The sandbox does not see this request/);

    // The same handshake is the latest one, and the event log lists it by id.
    const id = /data-handshake="(hs_[^"]+)" data-status/.exec(html)?.[1] ?? "";
    expect((await page()).html).toContain(`data-handshake="${id}" data-status="completed"`);
    const logged = await events(env, `?handshake=${id}`);
    expect(logged.map((e) => e.type)).toEqual(["portal", "authorize", "consent", "consent", "webhook", "token", "api"]);

    // Linked from the console: the install row and the registration card.
    const consolePage = await (await fetch(`${env.url}/console`)).text();
    expect(consolePage).toContain('href="/console/handshake?install_id=1"');
    expect(consolePage).toContain('href="/console/handshake"');
  });

  it("a redirect_uri that differs from the registration shows the failing check", async () => {
    const { url } = await control<{ url: string }>(env, "POST", "/authorize-url", { operatorId: 1002, overrides: { redirect_uri: "http://localhost:3999/elsewhere" } });
    expect((await fetch(url, { redirect: "manual" })).status).toBe(400);

    const { html } = await page();
    expect(html).toContain('data-status="failed"');
    const steps = stepsOf(html);
    expect(steps.map((s) => [s.caller, s.request, s.failed])).toEqual([
      ["test", "POST /_sandbox/authorize-url", false],
      ["browser", "GET /idp/oauth2/auth", true],
    ]);
    expect(steps[1]?.checks.at(-1)).toEqual({ passed: false, text: "redirect_uri equals the registered one exactly" });
    expect(decode(html)).toContain("Step 2, Authorization endpoint: failed check: <strong>redirect_uri equals the registered one exactly</strong>");
  });

  it("an authorization request used twice shows the refused second use on its handshake", async () => {
    const connect = await postForm(`${env.url}/portal/operators/1001/connect`, {});
    const authorizeUrl = locationOf(connect);
    expect((await fetch(authorizeUrl, { redirect: "manual" })).status).toBe(302);
    expect((await fetch(authorizeUrl, { redirect: "manual" })).status).toBe(400);

    const steps = stepsOf((await page()).html);
    expect(steps.map((s) => [s.request, s.failed])).toEqual([
      ["POST /portal/operators/1001/connect", false],
      ["GET /idp/oauth2/auth", false],
      ["GET /idp/oauth2/auth", true],
    ]);
    expect(steps[2]?.checks).toEqual([{ passed: false, text: expect.stringContaining("built by the operator portal: This authorization request was already used once") }]);
  });

  it("a reused code shows the failing check, and the chain it revoked", async () => {
    const { callback } = await connectThroughPortal(1001);
    const code = callback.searchParams.get("code") ?? "";
    await appSide(code);
    expect((await redeemCode(env, code)).status).toBe(400);

    const { html } = await page("?install_id=1");
    const steps = stepsOf(html);
    const reuse = steps.at(-1);
    expect(reuse?.request).toBe("POST /idp/oauth2/token");
    expect(reuse?.failed).toBe(true);
    expect(reuse?.checks.filter((c) => !c.passed)).toEqual([{ passed: false, text: "the code was not used before (single use)" }]);
    expect(html).toContain("every token minted from this code is revoked (2 still active)");
    expect(html).toContain("Answer: 400 invalid_grant");
  });

  it("a wrong client secret shows the failing check on the handshake, though the call names no install", async () => {
    const { callback } = await connectThroughPortal(1003);
    expect((await redeemCode(env, callback.searchParams.get("code") ?? "", { client_secret: "not-the-secret-0123456789" })).status).toBe(401);

    const { html } = await page();
    expect(html).toContain('data-status="failed"');
    const token = stepsOf(html).at(-1);
    expect(token?.request).toBe("POST /idp/oauth2/token");
    expect(token?.checks.at(-1)).toEqual({ passed: false, text: "client_secret matches the registered one" });
    expect(html).toContain("Answer: 401 invalid_client");
  });

  it("a denied consent and a remembered one (Open) read as such", async () => {
    const connect = await postForm(`${env.url}/portal/operators/1002/connect`, {});
    const consentUrl = locationOf(await fetch(locationOf(connect), { redirect: "manual" }));
    const challenge = challengeFrom(await (await fetch(consentUrl)).text());
    await postForm(`${env.url}/idp/consent`, { consent_challenge: challenge, decision: "deny" });
    expect((await page()).html).toContain('data-status="denied"');

    const { callback } = await connectThroughPortal(1001);
    await appSide(callback.searchParams.get("code") ?? "");
    const open = await postForm(`${env.url}/portal/operators/1001/open`, {});
    const back = new URL(locationOf(await fetch(locationOf(open), { redirect: "manual" })));
    await appSide(back.searchParams.get("code") ?? "");
    const { html } = await page();
    expect(stepsOf(html).map((s) => s.request)).toEqual([
      "POST /portal/operators/1001/open",
      "GET /idp/oauth2/auth",
      "GET /idp/oauth2/auth",
      "POST /idp/oauth2/token",
      "GET /api/v1/consumers/me",
    ]);
    expect(html).toContain("Consent remembered (the same request)");
    // The install's page lists both of its handshakes.
    expect((await page("?install_id=1")).html.match(/<li data-handshake="/g)).toHaveLength(2);
  });

  it("answers 404 for a handshake the log does not hold and 400 for a malformed query", async () => {
    expect((await page("?id=hs_unknown")).status).toBe(404);
    expect((await page("?install_id=42")).status).toBe(404);
    expect((await page("?install_id=zero")).status).toBe(400);
    expect((await controlRaw(env, "GET", "/events?handshake=not-an-id")).status).toBe(400);
    expect((await page()).html).toContain("No handshake to show yet");
  });
});

describe("no token, code or secret reaches the page or the event log", () => {
  it("after installs, a reused code, a wrong secret and a refused request", async () => {
    const first = await connectThroughPortal(1001);
    const code = first.callback.searchParams.get("code") ?? "";
    const tokens = await appSide(code);
    await redeemCode(env, code);
    const second = await connectThroughPortal(1002);
    const wrongSecret = "not-the-secret-0123456789";
    await redeemCode(env, second.callback.searchParams.get("code") ?? "", { client_secret: wrongSecret });
    const { url } = await control<{ url: string }>(env, "POST", "/authorize-url", { operatorId: 1003, overrides: { scope: "teams:write offline_access" } });
    await fetch(url, { redirect: "manual" });
    const refused = new URL(url);

    const pages = [(await page()).html];
    for (const id of new Set((await events(env)).map((e) => e.detail.handshake).filter((v): v is string => typeof v === "string"))) {
      pages.push((await page(`?id=${id}`)).html);
    }
    expect(pages).toHaveLength(4);
    const shown = [...pages, JSON.stringify(await events(env)), env.logs.join("\n")].join("\n");
    await control(env, "GET", "/persistence?flush=1");
    const everything = [shown, await readFile(path.join(env.config.dataDir, "journal.jsonl"), "utf8")].join("\n");
    // The state parameter is the app's CSRF value: never shown (the state file keeps it with its consent request).
    const state = first.callback.searchParams.get("state") ?? "";
    expect(state.length).toBeGreaterThan(8);
    expect(shown).not.toContain(state);
    const secrets = [
      code,
      second.callback.searchParams.get("code") ?? "",
      tokens.access_token,
      tokens.refresh_token,
      CLIENT_SECRET,
      wrongSecret,
      WEBHOOK_SECRET,
      first.authorizeUrl.searchParams.get("portal_ticket") ?? "",
      refused.searchParams.get("portal_ticket") ?? "",
      first.challenge,
    ];
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(everything).not.toContain(secret);
    }
    expect(everything).not.toMatch(/volt_(at|rt|ac)_/);
  });
});
