// Issue 5, the sandbox side: the app-owner console changes the requested scopes; widening flags every active install
// (403 NEEDS_REAUTH on every API call), narrowing triggers nothing; reauth_url leads to a consent page with the exact new
// list; granting clears the flag and the existing tokens then carry the widened scopes.
import { beforeEach, describe, expect, it } from "vitest";
import {
  REQUESTED_SCOPES,
  callApi,
  control,
  controlRaw,
  events,
  installAndRedeem,
  openConsent,
  postForm,
  refreshTokens,
  resetSandbox,
  scopeItemsFrom,
  setUpTestSandbox,
  startTestSandbox,
  type TokenSet,
} from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

const WIDER = [...REQUESTED_SCOPES, "teams:read"];

interface ScopeChangeBody {
  previous: string[];
  requested_scopes: string[];
  added: string[];
  removed: string[];
  widened: boolean;
  flagged_install_ids: number[];
}

function setScopes(scopes: string[]): Promise<ScopeChangeBody> {
  return control<ScopeChangeBody>(env, "POST", "/app/scopes", { scopes });
}

function needsReauthBody(installId: number): unknown {
  return {
    status: "FORBIDDEN",
    errorCode: "NEEDS_REAUTH",
    message: `Install ${installId} of Test Partner App must be re-authorized by the operator: the app's scopes were widened.`,
    context: { install_id: installId, reauth_url: `${env.url}/portal/reauth/${installId}` },
  };
}

describe("the requested scopes", () => {
  it("start as APP_REQUESTED_SCOPES (GET /_sandbox/app)", async () => {
    expect(await control(env, "GET", "/app")).toEqual({
      app_name: "Test Partner App",
      client_id: "test-partner-app",
      redirect_uri: "http://localhost:3999/oauth/callback",
      requested_scopes: REQUESTED_SCOPES,
      scopes_changed_at: null,
      reauth_return_url: "http://localhost:3999/dashboard",
    });
  });

  it.each([[{ scopes: [] }], [{ scopes: ["Teams!"] }], [{ scopes: ["offline_access"] }], [{ scope: "teams" }], [{}]])("refuse %j with 400", async (body) => {
    expect((await controlRaw(env, "POST", "/app/scopes", body)).status).toBe(400);
  });

  it("a change persists across a restart and shows in the next consent; reset goes back to the configured list", async () => {
    await setScopes(WIDER);
    await env.restart();
    expect((await control<{ requested_scopes: string[] }>(env, "GET", "/app")).requested_scopes).toEqual(WIDER);
    expect(scopeItemsFrom((await openConsent(env, 1001)).html)).toEqual([...WIDER, "offline_access"]);
    await control(env, "POST", "/reset");
    expect((await control<{ requested_scopes: string[] }>(env, "GET", "/app")).requested_scopes).toEqual(REQUESTED_SCOPES);
  });
});

describe("widening", () => {
  it("flags every active install: every API call answers 403 NEEDS_REAUTH naming the install", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    const change = await setScopes(WIDER);
    expect(change).toEqual({ previous: REQUESTED_SCOPES, requested_scopes: WIDER, added: ["teams:read"], removed: [], widened: true, flagged_install_ids: [1, 2] });

    for (const [tokens, installId] of [[a, 1], [b, 2]] as const) {
      for (const path of ["/charge-points", "/charges", "/consumers/me", "/teams"]) {
        const response = await callApi(env, path, tokens.access_token);
        expect(response.status).toBe(403);
        expect(await response.json()).toEqual(needsReauthBody(installId));
      }
    }
    const { installs } = await control<{ installs: { needs_reauth: boolean; needs_reauth_since: string | null; reauth_url: string | null }[] }>(env, "GET", "/installs");
    expect(installs.map((i) => [i.needs_reauth, i.reauth_url])).toEqual([
      [true, `${env.url}/portal/reauth/1`],
      [true, `${env.url}/portal/reauth/2`],
    ]);
    expect(installs[0]?.needs_reauth_since).toEqual(expect.any(String));
  });

  it("does not flag revoked installs, and a new install after the widening is not flagged", async () => {
    await installAndRedeem(env, 1001);
    await control(env, "POST", "/installs/1/revoke");
    expect((await setScopes(WIDER)).flagged_install_ids).toEqual([]);
    const fresh = await installAndRedeem(env, 1002);
    expect(fresh.scope).toBe([...WIDER, "offline_access"].join(" "));
    expect((await callApi(env, "/teams", fresh.access_token)).status).toBe(200);
  });

  it("a change that adds one scope and removes another is a widening", async () => {
    await installAndRedeem(env, 1001);
    const change = await setScopes(["charge-points:read", "teams:read"]);
    expect(change).toMatchObject({ added: ["teams:read"], removed: ["charge-transactions:read"], widened: true, flagged_install_ids: [1] });
  });

  it("refreshing still works while flagged; the new access token is flagged too", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await setScopes(WIDER);
    const refreshed = await refreshTokens(env, tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as TokenSet;
    expect((await callApi(env, "/charge-points", next.access_token)).status).toBe(403);
  });
});

describe("narrowing", () => {
  it("changes nothing for existing installs and triggers nothing", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const seqBefore = (await events(env)).length;
    const change = await setScopes(["charge-points:read"]);
    expect(change).toMatchObject({ added: [], removed: ["charge-transactions:read"], widened: false, flagged_install_ids: [] });
    expect((await callApi(env, "/charges", tokens.access_token)).status).toBe(200); // the install keeps what it was granted
    const after = (await events(env)).slice(seqBefore);
    expect(after.filter((e) => e.detail.action === "flagged_needs_reauth")).toEqual([]);
    expect((await control<{ installs: { needs_reauth: boolean }[] }>(env, "GET", "/installs")).installs[0]?.needs_reauth).toBe(false);
    // The next consent shows the narrower list.
    expect(scopeItemsFrom((await openConsent(env, 1002)).html)).toEqual(["charge-points:read", "offline_access"]);
  });

  it("the same list again is no change at all", async () => {
    await installAndRedeem(env, 1001);
    expect(await setScopes(REQUESTED_SCOPES)).toMatchObject({ added: [], removed: [], widened: false, flagged_install_ids: [] });
  });
});

describe("reauth_url", () => {
  it("shows a consent page with the exact new scope list, offline_access included, and what is new", async () => {
    await installAndRedeem(env, 1001);
    await setScopes(WIDER);
    const page = await fetch(`${env.url}/portal/reauth/1`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(scopeItemsFrom(html)).toEqual([...WIDER, "offline_access"]);
    expect(html).toContain("Re-authorize Test Partner App");
    expect(html).toContain("Northwind Charging");
    expect(html).toMatch(/New since your last consent: <code>teams:read<\/code>/);
    expect(html).toContain('action="/portal/reauth/1"');
    expect(page.headers.get("set-cookie")).toContain("volt_sandbox_operator=1001");
  });

  it("Approve clears the flag and sends the operator back to the app's dashboard; existing tokens now carry the new scope", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await setScopes(WIDER);
    const approve = await postForm(`${env.url}/portal/reauth/1`, { decision: "approve" });
    expect(approve.status).toBe(303);
    expect(approve.headers.get("location")).toBe("http://localhost:3999/dashboard");

    expect((await callApi(env, "/charge-points", tokens.access_token)).status).toBe(200);
    expect((await callApi(env, "/teams", tokens.access_token)).status).toBe(200); // widened, same token
    const me = (await (await callApi(env, "/consumers/me", tokens.access_token)).json()) as { scopes: string[] };
    expect(me.scopes).toEqual(WIDER);
    const refreshed = (await (await refreshTokens(env, tokens.refresh_token)).json()) as TokenSet;
    expect(refreshed.scope).toBe([...WIDER, "offline_access"].join(" "));
    const { installs } = await control<{ installs: { needs_reauth: boolean; scopes: string[]; install_id: number }[] }>(env, "GET", "/installs");
    expect(installs[0]).toMatchObject({ install_id: 1, needs_reauth: false, scopes: [...WIDER, "offline_access"] });
    expect(await (await fetch(`${env.url}/portal/reauth/1`)).text()).toContain("Nothing to re-authorize");
  });

  it("granting one install leaves the other flagged", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    await setScopes(WIDER);
    await postForm(`${env.url}/portal/reauth/2`, { decision: "approve" });
    expect((await callApi(env, "/charge-points", a.access_token)).status).toBe(403);
    expect((await callApi(env, "/charge-points", b.access_token)).status).toBe(200);
  });

  it("Deny keeps the flag and returns to the catalogue", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await setScopes(WIDER);
    const deny = await postForm(`${env.url}/portal/reauth/1`, { decision: "deny" });
    expect(deny.status).toBe(303);
    expect(deny.headers.get("location")).toBe("/portal/operators/1001");
    expect((await callApi(env, "/charge-points", tokens.access_token)).status).toBe(403);
    const catalogue = await (await fetch(`${env.url}/portal/operators/1001`)).text();
    expect(catalogue).toContain("Needs re-authorization");
    expect(catalogue).toContain(`href="${env.url}/portal/reauth/1"`);
  });

  it("answers 404 for an unknown install, 410 for a revoked one, 400 for a bad decision", async () => {
    await installAndRedeem(env, 1001);
    await setScopes(WIDER);
    expect((await fetch(`${env.url}/portal/reauth/42`)).status).toBe(404);
    expect((await fetch(`${env.url}/portal/reauth/abc`)).status).toBe(404);
    expect((await postForm(`${env.url}/portal/reauth/1`, { decision: "maybe" })).status).toBe(400);
    await control(env, "POST", "/installs/1/revoke");
    expect((await fetch(`${env.url}/portal/reauth/1`)).status).toBe(410);
    expect((await postForm(`${env.url}/portal/reauth/1`, { decision: "approve" })).status).toBe(410);
  });

  it("SANDBOX_REAUTH_RETURN_URL overrides where Approve sends the operator", async () => {
    const custom = await startTestSandbox({ reauthReturnUrl: "http://localhost:3999/installs/overview" });
    try {
      await installAndRedeem(custom, 1001);
      await control(custom, "POST", "/app/scopes", { scopes: WIDER });
      const approve = await postForm(`${custom.url}/portal/reauth/1`, { decision: "approve" });
      expect(approve.headers.get("location")).toBe("http://localhost:3999/installs/overview");
    } finally {
      await custom.close();
    }
  });

  it("Connect → Approve on a flagged install also clears the flag (same install_id)", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await setScopes(WIDER);
    await installAndRedeem(env, 1001);
    expect((await callApi(env, "/teams", tokens.access_token)).status).toBe(200);
  });
});

describe("other 403s look different", () => {
  it("a missing scope is a plain ACCESS_FORBIDDEN with requiredScope, never NEEDS_REAUTH, and flags nothing", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const response = await callApi(env, "/teams", tokens.access_token);
    expect(response.status).toBe(403);
    const body = (await response.json()) as { errorCode: string; context: Record<string, unknown> };
    expect(body).toEqual({ status: "FORBIDDEN", errorCode: "ACCESS_FORBIDDEN", message: "Access forbidden: this operation needs the scope teams:read", context: { requiredScope: "teams:read" } });
    expect((await control<{ installs: { needs_reauth: boolean }[] }>(env, "GET", "/installs")).installs[0]?.needs_reauth).toBe(false);
  });
});

describe("the API call log per install (GET /_sandbox/events?type=api&install_id=N)", () => {
  it("lets a test assert which installs called the API while flagged", async () => {
    const a = await installAndRedeem(env, 1001);
    const b = await installAndRedeem(env, 1002);
    await setScopes(WIDER);
    const since = Math.max(...(await events(env)).map((e) => e.seq));
    await callApi(env, "/charge-points", a.access_token);
    await postForm(`${env.url}/portal/reauth/2`, { decision: "approve" });
    await callApi(env, "/charge-points", b.access_token);
    await callApi(env, "/teams", b.access_token);

    const one = await events(env, `?type=api&install_id=1&since=${since}`);
    expect(one.map((e) => [e.detail.path, e.detail.status, e.detail.error_code])).toEqual([["/api/v1/charge-points", 403, "NEEDS_REAUTH"]]);
    const two = await events(env, `?type=api&install_id=2&since=${since}`);
    expect(two.map((e) => [e.detail.path, e.detail.status, e.detail.error_code])).toEqual([
      ["/api/v1/charge-points", 200, null],
      ["/api/v1/teams", 200, null],
    ]);
    expect(await events(env, "?type=api&install_id=3")).toEqual([]);
    expect((await controlRaw(env, "GET", "/events?install_id=zero")).status).toBe(400);
    // The filter applies to every event type naming the install.
    expect((await events(env, "?install_id=2")).some((e) => e.type === "webhook")).toBe(true);
  });
});

describe("the app-owner console (/console)", () => {
  it("shows the registration, the requested scopes as a form, and the installs", async () => {
    await installAndRedeem(env, 1001);
    const response = await fetch(`${env.url}/console`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("Volt sandbox · app owner console");
    expect(html).toContain("test-partner-app");
    expect(html).toContain('<form method="post" action="/console/scopes"');
    expect(html).toMatch(/name="scopes" value="charge-points:read" checked/);
    expect(html).toMatch(/name="scopes" value="teams:read" \/>/);
    expect(html).toContain('<tr data-install-id="1">');
    expect(html).not.toContain("test-client-secret");
  });

  it("saving a wider list flags the installs and says so; the console links each reauth_url", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const body = new URLSearchParams([["scopes", "charge-points:read"], ["scopes", "charge-transactions:read"], ["scopes", "teams:read"], ["extra", ""]]);
    const saved = await fetch(`${env.url}/console/scopes`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString(),
      redirect: "manual",
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe("/console?change=widened&flagged=1");
    expect((await callApi(env, "/charge-points", tokens.access_token)).status).toBe(403);
    const page = await (await fetch(`${env.url}/console?change=widened&flagged=1`)).text();
    expect(page).toContain("Scopes widened: 1 install flagged as needing re-authorization.");
    expect(page).toContain(`href="${env.url}/portal/reauth/1"`);
  });

  it("saving a narrower list (with an extra typed scope) reports a narrowing when nothing was added", async () => {
    await installAndRedeem(env, 1001);
    const saved = await postForm(`${env.url}/console/scopes`, { scopes: "charge-points:read" });
    expect(saved.headers.get("location")).toBe("/console?change=narrowed&flagged=0");
    const typed = await postForm(`${env.url}/console/scopes`, { scopes: "charge-points:read", extra: "energy:read" });
    expect(typed.headers.get("location")).toBe("/console?change=widened&flagged=1");
    expect((await control<{ requested_scopes: string[] }>(env, "GET", "/app")).requested_scopes).toEqual(["charge-points:read", "energy:read"]);
  });

  it("refuses a malformed or empty list with the page and a message, changing nothing", async () => {
    const bad = await postForm(`${env.url}/console/scopes`, { extra: "Not A Scope" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Scopes not saved");
    const empty = await postForm(`${env.url}/console/scopes`, { extra: "offline_access" });
    expect(empty.status).toBe(400);
    expect((await control<{ requested_scopes: string[] }>(env, "GET", "/app")).requested_scopes).toEqual(REQUESTED_SCOPES);
  });
});
