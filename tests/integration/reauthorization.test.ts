// NEEDS_REAUTH against the running app and sandbox (contract §3, §7): what flags an install, what
// does not, and that a flagged install is left alone while others carry on.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { closeSql, control, installViaPortal, resetWorld, sandboxEvents, sql, stack, tokenCalls } from "../helpers/stack";
import { SESSIONS_PAGE } from "../helpers/dashboard";

beforeEach(resetWorld);
afterAll(closeSql);

const BASE_SCOPES = ["charge-points:read", "charge-transactions:read"];

async function dashboard(sessionCookie: string) {
  const response = await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: sessionCookie } });
  return { status: response.status, html: await response.text() };
}
async function status(installId: number) {
  return (await sql<{ status: string }>("SELECT status FROM installs WHERE install_id = $1", [installId]))[0]?.status;
}
async function apiCalls(installId: number) {
  return (await sandboxEvents("api")).filter((e) => e.detail.install_id === installId);
}
async function setScopes(scopes: string[]) {
  return control<{ widened: boolean; flagged_install_ids: number[] }>("POST", "/app/scopes", { scopes });
}
function sweep() {
  return fetch(`${stack.appUrl}/api/cron/reconcile`, { method: "POST", headers: { Authorization: `Bearer ${process.env.CRON_SECRET}` } }).then((r) => r.json());
}

describe("what flags an install", () => {
  it("narrowing the scopes triggers nothing", async () => {
    const install = await installViaPortal(1001);
    const change = await setScopes(["charge-points:read"]);
    expect(change).toMatchObject({ widened: false, flagged_install_ids: [] });
    const page = await dashboard(install.sessionCookie);
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-testid="charge-points"');
    expect(await status(install.installId)).toBe("ACTIVE");
  });

  // The charge points page reads the API live until the first sync (no sync runs in the test stack),
  // so it is the page that meets the service's answer to a scope it did not grant.
  it("a plain 403 (a scope the service did not grant) does not flag the install", async () => {
    await setScopes(["charge-transactions:read"]);
    const install = await installViaPortal(1001);
    // The app believes it may read charge points; the service says 403 ACCESS_FORBIDDEN.
    await sql("UPDATE installs SET granted_scopes = array_append(granted_scopes, 'charge-points:read') WHERE install_id = $1", [install.installId]);
    const page = await dashboard(install.sessionCookie);
    expect(page.html).toContain('data-reason="not_granted"');
    expect(page.html).toContain('data-testid="install-status"'); // the rest of the page works
    const forbidden = (await apiCalls(install.installId)).filter((e) => e.detail.error_code === "ACCESS_FORBIDDEN");
    expect(forbidden.length).toBeGreaterThan(0);
    expect(await status(install.installId)).toBe("ACTIVE");
    expect(await sql("SELECT id FROM install_events WHERE to_status = 'NEEDS_REAUTH'")).toEqual([]);
  });

  it("a scope the operator never granted is not requested at all", async () => {
    await setScopes(["charge-transactions:read"]);
    const install = await installViaPortal(1001);
    const page = await dashboard(install.sessionCookie);
    expect(page.html).toContain('data-reason="not_granted"');
    const paths = (await apiCalls(install.installId)).map((e) => String(e.detail.path));
    expect(paths.some((p) => p.startsWith("/api/v1/consumers/me"))).toBe(true);
    expect(paths.filter((p) => p.startsWith("/api/v1/charge-points"))).toEqual([]);
  });
});

describe("one install flagged, another not", () => {
  it("the flagged one is not called by pages, sweeps or jobs; the other keeps working; keep-alive still refreshes the flagged one", async () => {
    const flagged = await installViaPortal(1001);
    expect((await setScopes([...BASE_SCOPES, "teams:write"])).flagged_install_ids).toEqual([flagged.installId]);
    const other = await installViaPortal(1002); // consented to the widened scopes: not flagged

    // The first call after the widening meets NEEDS_REAUTH and flags the install.
    expect((await dashboard(flagged.sessionCookie)).html).toContain('data-testid="reauth-banner"');
    expect(await status(flagged.installId)).toBe("NEEDS_REAUTH");
    const [row] = await sql<{ reauth_url: string }>("SELECT reauth_url FROM installs WHERE install_id = $1", [flagged.installId]);
    expect(row!.reauth_url).toMatch(new RegExp(`/portal/reauth/${flagged.installId}$`));
    const callsWhenFlagged = (await apiCalls(flagged.installId)).length;

    // Page views, a sweep: nothing for the flagged install; the other is checked and works.
    await dashboard(flagged.sessionCookie);
    await dashboard(flagged.sessionCookie);
    // Make every active install due for the sweep. The flagged one was just flagged, which counts as a
    // look at the API: the sweep's sparse re-authorization probe is not due for it (6 hours).
    await sql("UPDATE installs SET last_reconciled_at = NULL WHERE status = 'ACTIVE'");
    const swept = await sweep();
    expect(swept).toMatchObject({ due: 1, worked: 1, outcomes: { live: 1 } });
    expect((await dashboard(other.sessionCookie)).html).toContain('data-testid="charge-points"');
    expect((await apiCalls(flagged.installId)).length).toBe(callsWhenFlagged);
    expect((await apiCalls(other.installId)).length).toBeGreaterThan(0);
    expect(await status(other.installId)).toBe("ACTIVE");

    // Keep-alive refreshes the flagged install's tokens (a token-endpoint call, not an API call),
    // so its chain survives a long wait for the operator.
    const [flaggedRow] = await sql<{ id: string }>("SELECT id FROM installs WHERE install_id = $1", [flagged.installId]);
    await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day' WHERE install_row_id = $1", [flaggedRow!.id]);
    const keepAlive = resultOf<{ outcomes: Record<string, number> }>(await runAppWorker(["keep-alive"]));
    expect(keepAlive).toMatchObject({ due: 1, worked: 1, outcomes: { refreshed: 1 } });
    expect((await tokenCalls(flagged.installId)).refresh_token).toBe(1);
    expect((await apiCalls(flagged.installId)).length).toBe(callsWhenFlagged);
    expect(await status(flagged.installId)).toBe("NEEDS_REAUTH");
  });
});

// Issue 8: the operator may re-consent at reauth_url without the app's button (from the portal, or
// a support link). The flag must still clear, without the app probing a flagged install often.
describe("a re-consent the app did not start", () => {
  async function flaggedInstall() {
    const install = await installViaPortal(1001);
    await setScopes([...BASE_SCOPES, "teams:write"]);
    expect((await dashboard(install.sessionCookie)).html).toContain('data-testid="reauth-banner"');
    expect(await status(install.installId)).toBe("NEEDS_REAUTH");
    return install;
  }
  /** The operator approves on the service's page directly, never passing through the app's button. */
  async function approveAtReauthUrl(installId: number) {
    const [row] = await sql<{ reauth_url: string }>("SELECT reauth_url FROM installs WHERE install_id = $1", [installId]);
    const response = await fetch(row!.reauth_url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "decision=approve",
      redirect: "manual",
    });
    expect(response.status).toBe(303);
  }
  const probes = async (installId: number) => (await apiCalls(installId)).filter((e) => String(e.detail.path).endsWith("/consumers/me")).length;
  /** Pretend the install's last look at the API (the flag, or the last probe) was `minutes` ago. */
  const lastLookedMinutesAgo = (installId: number, minutes: number) =>
    sql(`UPDATE installs SET last_reconciled_at = now() - interval '${minutes} minutes' WHERE install_id = $1`, [installId]);

  it("an operator's visit probes at most every 10 minutes, and clears the flag once they re-consented", async () => {
    const install = await flaggedInstall();
    await approveAtReauthUrl(install.installId);
    const before = await probes(install.installId);

    // Right after the flag: visits do not probe (the flag is the API's latest word).
    expect((await dashboard(install.sessionCookie)).html).toContain('data-testid="reauth-banner"');
    expect(await probes(install.installId)).toBe(before);

    // Ten minutes on, the next visit probes once, finds the API answering again, and clears the flag.
    await lastLookedMinutesAgo(install.installId, 11);
    const page = await dashboard(install.sessionCookie);
    expect(page.html).not.toContain('data-testid="reauth-banner"');
    expect(page.html).toContain('data-testid="charge-points"');
    expect(await probes(install.installId)).toBe(before + 1);
    const [row] = await sql<{ status: string; granted_scopes: string[] }>("SELECT status, granted_scopes FROM installs WHERE install_id = $1", [install.installId]);
    expect(row).toMatchObject({ status: "ACTIVE" });
    expect(row!.granted_scopes).toContain("teams:write");
  });

  it("while the operator has not re-consented, a due visit probes once and keeps the flag", async () => {
    const install = await flaggedInstall();
    await lastLookedMinutesAgo(install.installId, 11);
    const before = await probes(install.installId);
    await Promise.all([dashboard(install.sessionCookie), dashboard(install.sessionCookie), dashboard(install.sessionCookie)]);
    expect(await probes(install.installId)).toBe(before + 1);
    expect(await status(install.installId)).toBe("NEEDS_REAUTH");
  });

  it("the sweep probes a flagged install nobody visits every 6 hours, not on every run", async () => {
    const install = await flaggedInstall();
    await approveAtReauthUrl(install.installId);
    const before = await probes(install.installId);

    // Not due for its probe: the sweep's fan-out does not even enqueue it (lib/jobs/install-check.ts).
    const first = await sweep();
    expect(first).toMatchObject({ due: 0, worked: 0 });
    expect(await probes(install.installId)).toBe(before);

    await lastLookedMinutesAgo(install.installId, 6 * 60 + 1);
    const second = await sweep();
    expect(second).toMatchObject({ due: 1, worked: 1, outcomes: { reauth_cleared: 1 } });
    expect(await probes(install.installId)).toBe(before + 1);
    expect(await status(install.installId)).toBe("ACTIVE");
  });
});

// The probes' timing (A24, A131): sooner while the flag is young, at once (throttled) when the
// operator comes straight back from the service's page, and a visit notices a flag the app has not met.
describe("when a visit looks at the API", () => {
  const probes = async (installId: number) => (await apiCalls(installId)).filter((e) => String(e.detail.path).endsWith("/consumers/me")).length;
  const lastLookedSecondsAgo = (installId: number, seconds: number) =>
    sql(`UPDATE installs SET last_reconciled_at = now() - interval '${seconds} seconds' WHERE install_id = $1`, [installId]);
  async function flaggedInstall() {
    const install = await installViaPortal(1001);
    await setScopes([...BASE_SCOPES, "teams:write"]);
    expect((await dashboard(install.sessionCookie)).html).toContain('data-testid="reauth-banner"');
    return install;
  }
  async function approveAtReauthUrl(installId: number) {
    const [row] = await sql<{ reauth_url: string }>("SELECT reauth_url FROM installs WHERE install_id = $1", [installId]);
    const response = await fetch(row!.reauth_url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "decision=approve", redirect: "manual" });
    expect(response.status).toBe(303);
  }
  const visit = (sessionCookie: string, referer?: string) =>
    fetch(`${stack.appUrl}/dashboard`, { headers: { cookie: sessionCookie, ...(referer ? { referer } : {}) } }).then(async (r) => ({ status: r.status, html: await r.text() }));

  it("while the flag is young, a visit probes once a minute, not every 10 minutes", async () => {
    const install = await flaggedInstall();
    await approveAtReauthUrl(install.installId);
    const before = await probes(install.installId);
    await lastLookedSecondsAgo(install.installId, 30);
    expect((await visit(install.sessionCookie)).html).toContain('data-testid="reauth-banner"');
    expect(await probes(install.installId)).toBe(before);

    await lastLookedSecondsAgo(install.installId, 61);
    const page = await visit(install.sessionCookie);
    expect(page.html).not.toContain('data-testid="reauth-banner"');
    expect(await probes(install.installId)).toBe(before + 1);
    expect(await status(install.installId)).toBe("ACTIVE");
  });

  it("an old flag is probed every 10 minutes: a minute is not enough", async () => {
    const install = await flaggedInstall();
    await sql("UPDATE installs SET status_changed_at = now() - interval '2 hours' WHERE install_id = $1", [install.installId]);
    await lastLookedSecondsAgo(install.installId, 5 * 60);
    const before = await probes(install.installId);
    expect((await visit(install.sessionCookie)).html).toContain('data-testid="reauth-banner"');
    expect(await probes(install.installId)).toBe(before);
  });

  it("back from approving at the service's page (its Referer), the first visit probes and clears the banner; another origin's Referer does not", async () => {
    const install = await flaggedInstall();
    await approveAtReauthUrl(install.installId);
    const before = await probes(install.installId);
    // A Referer from elsewhere is not the service: nothing is due a moment after the flag.
    expect((await visit(install.sessionCookie, "https://elsewhere.example/")).html).toContain('data-testid="reauth-banner"');
    expect(await probes(install.installId)).toBe(before);

    // The way back from reauth_url (docs/flow.md section 4): the browser sends the service's origin.
    const back = await visit(install.sessionCookie, `${new URL(stack.sandboxUrl).origin}/`);
    expect(back.html).not.toContain('data-testid="reauth-banner"');
    expect(back.html).toContain('data-status="ACTIVE"');
    expect(await probes(install.installId)).toBe(before + 1);
  });

  it("a Referer from the service probes at most once per 30 s, however many pages load at once", async () => {
    const install = await flaggedInstall();
    const before = await probes(install.installId);
    const fromService = `${new URL(stack.sandboxUrl).origin}/portal`;
    await Promise.all(Array.from({ length: 5 }, () => visit(install.sessionCookie, fromService)));
    expect(await probes(install.installId)).toBe(before + 1);
    for (let i = 0; i < 3; i++) await visit(install.sessionCookie, fromService);
    expect(await probes(install.installId)).toBe(before + 1);
    expect(await status(install.installId)).toBe("NEEDS_REAUTH");
  });

  it("a flag the app has not met yet shows on the next visit once the last check is a minute old, with one call for many pages", async () => {
    const install = await installViaPortal(1001);
    expect((await visit(install.sessionCookie)).html).toContain('data-status="ACTIVE"');
    // The service flags the install; no call of the app has met it yet.
    await control("POST", `/installs/${install.installId}/flag-reauth`);
    const before = (await apiCalls(install.installId)).length;
    await lastLookedSecondsAgo(install.installId, 30);
    expect((await visit(install.sessionCookie)).html).toContain('data-status="ACTIVE"'); // checked 30 s ago: not due
    expect((await apiCalls(install.installId)).length).toBe(before);

    await lastLookedSecondsAgo(install.installId, 61);
    const pages = await Promise.all(Array.from({ length: 4 }, () => visit(install.sessionCookie)));
    expect((await apiCalls(install.installId)).length).toBe(before + 1);
    expect(await status(install.installId)).toBe("NEEDS_REAUTH");
    const next = await visit(install.sessionCookie);
    expect(next.html).toContain('data-testid="reauth-banner"');
    expect(pages.every((p) => p.status === 200)).toBe(true);
  });
});

// Contract §7 stops the API calls, not the operator's view of the copy the app already holds (A132).
describe("while re-authorization is pending", () => {
  // The optional sections (Teams, Energy) prove their own paused state in their folders' tests.
  it("every data page shows the local copy read-only, says since when, and calls nothing", async () => {
    const { syncInstall } = await import("@/lib/sync");
    const install = await installViaPortal(1001);
    expect((await syncInstall(install.installRowId, { perPage: 100 })).outcome).toBe("completed");
    await setScopes([...BASE_SCOPES, "teams:write"]);
    // The next look at the API (here: the install check) meets NEEDS_REAUTH and flags the install.
    await sql("UPDATE installs SET last_reconciled_at = NULL WHERE install_id = $1", [install.installId]);
    await sweep();
    expect(await status(install.installId)).toBe("NEEDS_REAUTH");
    const before = (await apiCalls(install.installId)).length;

    const get = async (path: string) => {
      const response = await fetch(`${stack.appUrl}${path}`, { headers: { cookie: install.sessionCookie } });
      return { status: response.status, html: (await response.text()).replace(/<!-- -->/g, "") };
    };
    const overview = await get("/dashboard?from=2025-01-01&to=2025-12-31");
    expect(overview.html).toContain('data-testid="reauth-banner"');
    expect(overview.html).toContain('data-testid="read-only-notice"');
    expect(overview.html).toMatch(/read-only: not updated since <time[^>]*>\d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC<\/time>/);
    expect(overview.html).toMatch(/data-testid="headline-sessions-value"[^>]*>36</);
    expect(overview.html).not.toContain('data-testid="refresh-while-copying"');

    const chargePoints = await get("/dashboard/charge-points");
    expect(chargePoints.html).toContain('data-testid="charge-points"');
    expect(chargePoints.html).toContain("data-charge-point-id=");
    // The Sessions section and its export, while the dashboard has one (a fork may remove it).
    const sessions = SESSIONS_PAGE;
    if (sessions) {
      expect((await get(sessions)).html).toContain('data-testid="sessions"');
      expect((await get(`${sessions}/export`)).status).toBe(200);
    }

    expect((await apiCalls(install.installId)).length).toBe(before);
    expect(await status(install.installId)).toBe("NEEDS_REAUTH");
  });

  it("a revoked install's copy stays hidden", async () => {
    const { syncInstall } = await import("@/lib/sync");
    const install = await installViaPortal(1001);
    await syncInstall(install.installRowId, { perPage: 100 });
    await control("POST", `/installs/${install.installId}/revoke`);
    expect(await status(install.installId)).toBe("REVOKED");
    const overview = await fetch(`${stack.appUrl}/dashboard`, { headers: { cookie: install.sessionCookie } }).then((r) => r.text());
    expect(overview).toContain('data-testid="install-lost"');
    expect(overview).not.toContain('data-testid="headline-sessions"');
    expect(overview).not.toContain('data-testid="read-only-notice"');
  });
});
