// Security headers on every kind of page the running app serves (proxy.ts, lib/http/security-headers.ts):
// a nonce-based Content-Security-Policy whose nonce is on every script Next.js emits, no framing, no
// sniffing, a referrer policy (no-referrer at the redirect_uri), and no HSTS over plain http. The API
// routes get their fixed JSON policy (next.config.mjs).
import { createHmac } from "node:crypto";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { approveInPortal, closeSql, installViaPortal, resetWorld, sql, stack } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

type Page = { status: number; headers: Headers; html: string };

async function get(path: string, init: RequestInit = {}): Promise<Page> {
  const response = await fetch(new URL(path, stack.appUrl), { redirect: "manual", ...init });
  return { status: response.status, headers: response.headers, html: await response.text() };
}

/** The directive → sources map of a Content-Security-Policy header. */
function csp(headers: Headers): Map<string, string[]> {
  const value = headers.get("content-security-policy");
  expect(value, "Content-Security-Policy").toBeTruthy();
  return new Map(
    value!.split(";").map((part) => {
      const [name, ...sources] = part.trim().split(/\s+/);
      return [name!, sources];
    }),
  );
}

function nonceOf(headers: Headers): string {
  const source = csp(headers)
    .get("script-src")
    ?.find((s) => s.startsWith("'nonce-"));
  expect(source, "a nonce in script-src").toBeTruthy();
  return source!.slice("'nonce-".length, -1);
}

/** What every page must carry (the app under test is served over plain http: no HSTS). */
function expectPageHeaders(page: Page, referrerPolicy = "strict-origin-when-cross-origin"): void {
  const policy = csp(page.headers);
  expect(policy.get("script-src")).toEqual(expect.arrayContaining(["'self'", "'strict-dynamic'"]));
  expect(policy.get("script-src")).not.toContain("'unsafe-inline'");
  expect(policy.get("script-src")).not.toContain("'unsafe-eval'");
  expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
  expect(policy.get("object-src")).toEqual(["'none'"]);
  expect(page.headers.get("x-frame-options")).toBe("DENY");
  expect(page.headers.get("x-content-type-options")).toBe("nosniff");
  expect(page.headers.get("referrer-policy")).toBe(referrerPolicy);
  expect(page.headers.get("strict-transport-security")).toBeNull();
}

/** A rendered page: every <script> Next.js emitted carries this response's nonce, so the browser runs them. */
function expectNoncedScripts(page: Page): void {
  const nonce = nonceOf(page.headers);
  const scripts = page.html.match(/<script\b[^>]*>/g) ?? [];
  expect(scripts.length).toBeGreaterThan(0);
  for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
}

describe("every page carries the security headers", () => {
  it("the home page, with a fresh nonce on each response and on every script", async () => {
    const first = await get("/");
    const second = await get("/");
    expect(first.status).toBe(200);
    expectPageHeaders(first);
    expectNoncedScripts(first);
    expectNoncedScripts(second);
    expect(nonceOf(first.headers)).not.toBe(nonceOf(second.headers));
  });

  it("the dashboard, signed out and signed in", async () => {
    const signedOut = await get("/dashboard");
    expect(signedOut.status).toBe(200);
    expect(signedOut.html).toContain("Open this app from your operator portal");
    expectPageHeaders(signedOut);
    expectNoncedScripts(signedOut);

    const { sessionCookie } = await installViaPortal(1001);
    const signedIn = await get("/dashboard", { headers: { cookie: sessionCookie } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.html).toContain('data-testid="install-status"');
    expectPageHeaders(signedIn);
    expectNoncedScripts(signedIn);
    // The re-authorize button's form may go to the service (its redirect is checked against form-action).
    expect(csp(signedIn.headers).get("form-action")).toEqual(expect.arrayContaining(["'self'", new URL(stack.sandboxUrl).origin]));
  });

  it("the staff sign-in page, and the console's redirect to it", async () => {
    const signIn = await get("/admin/sign-in");
    expect(signIn.status).toBe(200);
    expectPageHeaders(signIn);
    expectNoncedScripts(signIn);
    const console = await get("/admin");
    expect(console.status).toBe(307);
    expectPageHeaders(console);
  });

  it("the install failure page, and a page that does not exist", async () => {
    const failed = await get("/install/failed?reason=code_expired");
    expect(failed.status).toBe(200);
    expectPageHeaders(failed);
    expectNoncedScripts(failed);
    const missing = await get("/no-such-page");
    expect(missing.status).toBe(404);
    expectPageHeaders(missing);
    expectNoncedScripts(missing);
  });
});

describe("the redirect_uri", () => {
  it("keeps no-referrer and no-store on its redirects, with the page headers", async () => {
    const refused = await get("/oauth/callback?error=access_denied&state=abcdefgh");
    expect(refused.status).toBe(303);
    expectPageHeaders(refused, "no-referrer");
    expect(refused.headers.get("cache-control")).toBe("no-store");
  });

  it("carries them on its 503 page too (the database away before the code is spent)", async () => {
    const callback = await approveInPortal(1001);
    // Make the claim of the code fail as if the database were down, without stopping the database.
    await sql("ALTER TABLE authorization_code_claims RENAME TO authorization_code_claims_away");
    let page: Page;
    try {
      page = await get(callback.pathname + callback.search);
    } finally {
      await sql("ALTER TABLE authorization_code_claims_away RENAME TO authorization_code_claims");
    }
    expect(page.status).toBe(503);
    expect(page.html).toContain("Reload this page within a minute");
    expectPageHeaders(page, "no-referrer");
    expect(page.headers.get("cache-control")).toBe("no-store");
  });
});

describe("the API routes", () => {
  it("answer JSON with a render-nothing policy, and are not run through the page proxy", async () => {
    const body = JSON.stringify({ id: "whd_headers", type: "install.created", delivered_at: Math.floor(Date.now() / 1000), data: {} });
    const unsigned = await get("/api/webhooks", { method: "POST", body, headers: { "Content-Type": "application/json" } });
    expect(unsigned.status).toBe(401);
    const signed = await get("/api/webhooks", {
      method: "POST",
      body,
      headers: { "Content-Type": "application/json", "X-Volt-Signature": `sha256=${createHmac("sha256", stack.webhookSecret).update(body).digest("hex")}` },
    });
    for (const response of [unsigned, signed]) {
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("x-frame-options")).toBe("DENY");
    }
  });
});
