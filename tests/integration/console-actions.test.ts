// The staff console's actions on one install (issue 14): roles, the audit log, and cross-site posts.
//
// The actions are server actions. These tests post them as a browser does before the page's scripts
// have loaded: a multipart form with the hidden fields React renders into each form (the action's id
// among them), read from the install page's HTML as a console operator sees it. The same fields,
// posted with a viewer's cookie, an operator's cookie or none, show what the server does with a
// request the page would never have offered.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { PRODUCT, cookiePattern } from "../helpers/product";
import { closeSql, control, expireAccessToken, installViaPortal, resetWorld, sandboxEvents, sql, stack, tokenCalls } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

const OPERATOR_ID = 1001;
const ACTIONS = ["refresh", "reconcile", "sync", "mark_reinstall", "check_reauth"] as const;
type Action = (typeof ACTIONS)[number];

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run through \`npm test\``);
  return value;
}

async function signIn(email: string, password: string): Promise<string> {
  const result = await signInStaffWithFetch(email, password);
  expect(result.outcome).toBe("ok");
  return result.sessionCookie!;
}
const signInOperator = () => signIn(env("STAFF_DEV_EMAIL"), env("STAFF_DEV_PASSWORD"));
const signInViewer = () => signIn(env("STAFF_VIEWER_DEV_EMAIL"), env("STAFF_VIEWER_DEV_PASSWORD"));

const pagePath = (installRowId: string) => `/admin/installs/${installRowId}`;

function htmlDecode(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** Each action form of the page (by its data-action) with its hidden fields, as rendered for this cookie. */
async function actionForms(cookie: string, installRowId: string): Promise<Map<Action, [string, string][]>> {
  const response = await fetch(`${stack.appUrl}${pagePath(installRowId)}`, { headers: { Cookie: cookie } });
  expect(response.status).toBe(200);
  const html = await response.text();
  const forms = new Map<Action, [string, string][]>();
  for (const match of html.matchAll(/<form\b[^>]*\bdata-action="([a-z_]+)"[^>]*>([\s\S]*?)<\/form>/g)) {
    const fields: [string, string][] = [];
    for (const input of match[2]!.matchAll(/<input\b[^>]*>/g)) {
      const attribute = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(input[0])?.[1];
      if (attribute("type") !== "hidden" || attribute("name") === undefined) continue;
      fields.push([htmlDecode(attribute("name")!), htmlDecode(attribute("value") ?? "")]);
    }
    forms.set(match[1] as Action, fields);
  }
  return forms;
}

type Post = { cookie?: string; headers?: Record<string, string>; extra?: Record<string, string> };

/** Submits an action's form (its hidden fields, plus `extra`) the way a browser does without scripts. */
async function post(installRowId: string, fields: [string, string][], options: Post = {}): Promise<{ status: number; html: string; location: string | null }> {
  const body = new FormData();
  for (const [name, value] of fields) body.append(name, value);
  for (const [name, value] of Object.entries(options.extra ?? {})) body.append(name, value);
  const response = await fetch(`${stack.appUrl}${pagePath(installRowId)}`, {
    method: "POST",
    body,
    redirect: "manual",
    headers: { Origin: stack.appUrl, ...(options.cookie ? { Cookie: options.cookie } : {}), ...options.headers },
  });
  return { status: response.status, html: await response.text(), location: response.headers.get("location") };
}

/** The sentence the page shows for the action's result, from the page the post answered with. */
function resultText(html: string, action: Action): string | undefined {
  const match = new RegExp(`data-testid="action-result-${action}"[^>]*>([^<]*)<`).exec(html);
  return match ? htmlDecode(match[1]!) : undefined;
}

type AuditRow = { staff_email: string; staff_role: string; action: string; install_row_id: string | null; install_id: number | null; outcome: string; detail: string; requested_at: Date; finished_at: Date | null };
const auditRows = () => sql<AuditRow>("SELECT * FROM staff_actions ORDER BY requested_at, id");

async function installState(installRowId: string) {
  const [row] = await sql<{ status: string; version: number }>(
    "SELECT i.status, g.version FROM installs i LEFT JOIN token_grants g ON g.install_row_id = i.id WHERE i.id = $1",
    [installRowId],
  );
  return row!;
}
const apiCalls = async (installId: number) => (await sandboxEvents("api")).filter((e) => e.detail.install_id === installId).length;
const staffSyncJobs = (installRowId: string) =>
  sql<{ state: string }>("SELECT state FROM pgboss.job WHERE name = 'sync.install' AND singleton_key = $1 AND data->>'cause' = 'staff'", [installRowId]);

/** An installed operator, with the jobs its callback queued (the first sync) cleared. */
async function installed() {
  const install = await installViaPortal(OPERATOR_ID);
  await sql("DELETE FROM pgboss.job WHERE name = 'sync.install'");
  return install;
}

/** Every action's form: the four of a connected install, and "check now" of a flagged one. */
async function allForms(cookie: string, installRowId: string): Promise<Map<Action, [string, string][]>> {
  const forms = await actionForms(cookie, installRowId);
  await sql("UPDATE installs SET status = 'NEEDS_REAUTH' WHERE id = $1", [installRowId]);
  forms.set("check_reauth", (await actionForms(cookie, installRowId)).get("check_reauth")!);
  await sql("UPDATE installs SET status = 'ACTIVE' WHERE id = $1", [installRowId]);
  expect([...forms.keys()].sort()).toEqual([...ACTIONS].sort());
  return forms;
}

describe("who may act", () => {
  it("refuses every action without a staff session, with an operator's session, and for a viewer: nothing done; the viewer's refusals audited", async () => {
    const install = await installed();
    const forms = await allForms(await signInOperator(), install.installRowId);
    const viewer = await signInViewer();
    const before = { state: await installState(install.installRowId), api: await apiCalls(install.installId), tokens: (await tokenCalls(install.installId)).refresh_token };

    // The viewer's own page has no buttons, and says why.
    const viewerPage = await (await fetch(`${stack.appUrl}${pagePath(install.installRowId)}`, { headers: { Cookie: viewer } })).text();
    expect(viewerPage).toContain('data-testid="actions-viewer"');
    expect(viewerPage).not.toContain("data-action=");

    for (const action of ACTIONS) {
      const extra = action === "mark_reinstall" ? { confirm: "yes" } : undefined;
      // No session, and an operator's (not staff): sent to the sign-in page, nothing run or recorded.
      for (const cookie of [undefined, install.sessionCookie]) {
        const answer = await post(install.installRowId, forms.get(action)!, { cookie, extra });
        expect(answer.status, `${action} with ${cookie ? "an operator's session" : "no session"}`).toBe(303);
        expect(answer.location).toContain("/admin/sign-in");
      }
      // A viewer's page has no form to show the answer in (in a browser, a page left open since a
      // demotion keeps its form and shows it): the audit line holds the same sentence.
      const refused = await post(install.installRowId, forms.get(action)!, { cookie: viewer, extra });
      expect(refused.status).toBe(200);
    }

    expect(await installState(install.installRowId)).toEqual(before.state);
    expect(await apiCalls(install.installId)).toBe(before.api);
    expect((await tokenCalls(install.installId)).refresh_token).toBe(before.tokens);
    expect(await sql("SELECT id FROM pgboss.job WHERE name = 'sync.install'")).toEqual([]);
    const audit = await auditRows();
    expect(audit.map((row) => [row.action, row.staff_email, row.staff_role, row.outcome, row.install_row_id, row.install_id])).toEqual(
      ACTIONS.map((action) => [action, env("STAFF_VIEWER_DEV_EMAIL"), "viewer", "refused_role", install.installRowId, install.installId]),
    );
    for (const row of audit) expect(row.detail).toMatch(/^Not done: you are signed in as a console viewer, and .* needs the operator role\.$/);
  });
});

describe("each action by a console operator", () => {
  it("refresh now: two clicks at once make exactly one token call; both audited with who, when and the outcome", async () => {
    const install = await installed();
    const cookie = await signInOperator();
    const forms = await actionForms(cookie, install.installRowId);
    const { version } = await installState(install.installRowId);
    // The first refresh takes 1.5 s at the identity provider, so the second click arrives while it is in flight.
    await control("POST", "/faults", { tokenEndpoint: { mode: "delay", delayMs: 1500, count: 1, grantType: "refresh_token" } });
    const started = new Date();

    const answers = await Promise.all([0, 1].map(() => post(install.installRowId, forms.get("refresh")!, { cookie })));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(resultText(answer.html, "refresh")).toMatch(new RegExp(`^Refreshed: the install's tokens are version ${version + 1}; the access token expires at .* UTC\\.$`));
    }
    expect((await tokenCalls(install.installId)).refresh_token).toBe(1);
    expect((await installState(install.installRowId)).version).toBe(version + 1);

    const audit = await auditRows();
    expect(audit).toHaveLength(2);
    for (const row of audit) {
      expect(row).toMatchObject({ staff_email: env("STAFF_DEV_EMAIL"), staff_role: "operator", action: "refresh", install_row_id: install.installRowId, install_id: install.installId, outcome: "refreshed" });
      expect(row.requested_at.getTime()).toBeGreaterThanOrEqual(started.getTime() - 1000);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.requested_at.getTime());
    }
    // No token in the answer or in the log.
    for (const answer of answers) expect(answer.html).not.toMatch(/_(at|rt)_[A-Za-z0-9]/);
  });

  it("reconcile now: one API call, the outcome shown and audited", async () => {
    const install = await installed();
    const cookie = await signInOperator();
    const forms = await actionForms(cookie, install.installRowId);
    const calls = await apiCalls(install.installId);

    const answer = await post(install.installRowId, forms.get("reconcile")!, { cookie });
    expect(resultText(answer.html, "reconcile")).toBe("Reconciled: the API answers for this install; it is connected.");
    expect(await apiCalls(install.installId)).toBe(calls + 1);
    expect((await auditRows()).map((row) => [row.action, row.outcome])).toEqual([["reconcile", "live"]]);
  });

  it("reconcile now finds the install flagged; check re-authorization now says so, then clears it once the operator approved", async () => {
    const install = await installed();
    const cookie = await signInOperator();
    const forms = await allForms(cookie, install.installRowId);
    // The app owner widens the app's scopes: the service flags every install (contract §3).
    await control("POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:write"] });

    const reconciled = await post(install.installRowId, forms.get("reconcile")!, { cookie });
    expect(resultText(reconciled.html, "reconcile")).toMatch(/^Reconciled: the API says the install needs re-authorization/);
    expect((await installState(install.installRowId)).status).toBe("NEEDS_REAUTH");
    const still = await post(install.installRowId, forms.get("check_reauth")!, { cookie });
    expect(resultText(still.html, "check_reauth")).toBe("Checked: the operator has not re-authorized yet. Send them the re-authorization link.");

    const [row] = await sql<{ reauth_url: string }>("SELECT reauth_url FROM installs WHERE id = $1", [install.installRowId]);
    const approved = await fetch(row!.reauth_url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "decision=approve", redirect: "manual" });
    expect(approved.status).toBe(303);
    const cleared = await post(install.installRowId, forms.get("check_reauth")!, { cookie });
    expect(resultText(cleared.html, "check_reauth")).toBe("Checked: the operator has re-authorized; the install is connected again.");
    expect((await installState(install.installRowId)).status).toBe("ACTIVE");
    expect((await auditRows()).map((line) => [line.action, line.outcome])).toEqual([
      ["reconcile", "flagged"],
      ["check_reauth", "still_flagged"],
      ["check_reauth", "cleared"],
    ]);
  });

  it("sync now: queued for the worker once; a second click, or one while it runs, adds nothing and says so; the worker then syncs", async () => {
    const install = await installed();
    const cookie = await signInOperator();
    const forms = await actionForms(cookie, install.installRowId);

    const first = await post(install.installRowId, forms.get("sync")!, { cookie });
    expect(resultText(first.html, "sync")).toMatch(/^Queued: the worker syncs this install next/);
    const second = await post(install.installRowId, forms.get("sync")!, { cookie });
    expect(resultText(second.html, "sync")).toMatch(/^Nothing added: a sync of this install is already queued \(since .* UTC\); it will run\.$/);
    expect(await staffSyncJobs(install.installRowId)).toEqual([{ state: "created" }]);

    // A worker holding it: still one job, and staff are told it is running.
    await sql("UPDATE pgboss.job SET state = 'active', started_on = now() WHERE name = 'sync.install' AND singleton_key = $1", [install.installRowId]);
    const third = await post(install.installRowId, forms.get("sync")!, { cookie });
    expect(resultText(third.html, "sync")).toMatch(/^Nothing added: a sync of this install is running \(since .* UTC\)\.$/);
    expect(await staffSyncJobs(install.installRowId)).toEqual([{ state: "active" }]);
    expect((await auditRows()).map((row) => row.outcome)).toEqual(["queued", "already_queued", "already_running"]);

    // Back to waiting, the worker (here a cron call, which works queued jobs) runs it.
    await sql("UPDATE pgboss.job SET state = 'created', started_on = NULL WHERE name = 'sync.install' AND singleton_key = $1", [install.installRowId]);
    const run = await fetch(`${stack.appUrl}/api/cron/sync`, { method: "POST", headers: { Authorization: `Bearer ${env("CRON_SECRET")}` } });
    expect(run.status).toBe(200);
    expect(await staffSyncJobs(install.installRowId)).toEqual([{ state: "completed" }]);
    // One run per registered resource (lib/sync/resources.ts), all from this one job: of the template's
    // three, teams skipped (its scope is not granted here), the rest completed.
    const runs = await sql<{ resource: string; outcome: string }>("SELECT resource, outcome FROM sync_runs WHERE install_row_id = $1 ORDER BY resource", [install.installRowId]);
    const { SYNCED_RESOURCES } = await import("@/lib/sync/resources");
    expect(runs.map((r) => r.resource)).toEqual(SYNCED_RESOURCES.map((r) => r.name as string).sort());
    expect(runs.filter((r) => ["teams", "charge_points", "charges"].includes(r.resource))).toEqual([
      { resource: "charge_points", outcome: "completed" },
      { resource: "charges", outcome: "completed" },
      { resource: "teams", outcome: "skipped" },
    ]);
  });

  it("mark for re-install: needs its box ticked; then no API or token call is made for the install, and the operator's pages say so", async () => {
    const install = await installed();
    const cookie = await signInOperator();
    const forms = await actionForms(cookie, install.installRowId);

    const unticked = await post(install.installRowId, forms.get("mark_reinstall")!, { cookie });
    expect(resultText(unticked.html, "mark_reinstall")).toMatch(/^Not done: Tick the box to confirm/);
    expect((await installState(install.installRowId)).status).toBe("ACTIVE");

    const marked = await post(install.installRowId, forms.get("mark_reinstall")!, { cookie, extra: { confirm: "yes" } });
    expect(resultText(marked.html, "mark_reinstall")).toMatch(/^Marked for re-install: the app makes no more API or token calls/);
    expect((await installState(install.installRowId)).status).toBe("REINSTALL_NEEDED");
    const [event] = await sql<{ cause: string; to_status: string }>("SELECT cause, to_status FROM install_events WHERE install_row_id = $1 ORDER BY occurred_at DESC LIMIT 1", [install.installRowId]);
    expect(event).toEqual({ cause: "staff", to_status: "REINSTALL_NEEDED" });
    expect((await auditRows()).map((row) => [row.action, row.outcome])).toEqual([
      ["mark_reinstall", "invalid_form"],
      ["mark_reinstall", "marked"],
    ]);

    // Everything that would call for it: an expired token, due for keep-alive, the sweep and the sync.
    await expireAccessToken(install.installRowId, false);
    await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day' WHERE install_row_id = $1", [install.installRowId]);
    await sql("UPDATE installs SET last_reconciled_at = NULL WHERE id = $1", [install.installRowId]);
    const calls = { api: await apiCalls(install.installId), tokens: await tokenCalls(install.installId) };

    for (const path of ["/dashboard", "/dashboard/charge-points", "/"]) {
      const page = await fetch(`${stack.appUrl}${path}`, { headers: { Cookie: install.sessionCookie } });
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain("The app&#x27;s support team stopped the app&#x27;s access to your data");
    }
    for (const job of ["keep-alive", "reconcile", "sync"]) {
      const run = await fetch(`${stack.appUrl}/api/cron/${job}`, { method: "POST", headers: { Authorization: `Bearer ${env("CRON_SECRET")}` } });
      expect(await run.json()).toMatchObject({ job, due: 0 });
    }
    // The panel offers nothing more for it.
    expect((await actionForms(cookie, install.installRowId)).size).toBe(0);

    expect(await apiCalls(install.installId)).toBe(calls.api);
    expect(await tokenCalls(install.installId)).toMatchObject({ refresh_token: calls.tokens.refresh_token, authorization_code: calls.tokens.authorization_code });
  });
});

describe("cross-site requests", () => {
  it("a foreign Origin, or Sec-Fetch-Site cross-site or same-site, is refused with 403: nothing done, nothing audited", async () => {
    const install = await installed();
    const cookie = await signInOperator();
    const forms = await actionForms(cookie, install.installRowId);
    const before = await installState(install.installRowId);

    const attempts: Record<string, string>[] = [
      { Origin: "https://evil.example" },
      { Origin: "null" },
      { Origin: stack.appUrl, "Sec-Fetch-Site": "cross-site" },
      { Origin: stack.appUrl, "Sec-Fetch-Site": "same-site" },
      { "Sec-Fetch-Site": "cross-site" },
    ];
    for (const headers of attempts) {
      for (const action of ["mark_reinstall", "refresh", "sync"] as const) {
        const answer = await post(install.installRowId, forms.get(action)!, { cookie, headers, extra: { confirm: "yes" } });
        expect(answer.status, `${action} ${JSON.stringify(headers)}`).toBe(403);
        expect(answer.html).toBe("Refused: this request came from another site.\n");
      }
    }
    expect(await installState(install.installRowId)).toEqual(before);
    expect((await tokenCalls(install.installId)).refresh_token).toBe(0);
    expect(await sql("SELECT id FROM pgboss.job WHERE name = 'sync.install'")).toEqual([]);
    expect(await auditRows()).toEqual([]);

    // The same post from the app's own page goes through (the guard is not in the way of staff).
    const own = await post(install.installRowId, forms.get("sync")!, { cookie, headers: { "Sec-Fetch-Site": "same-origin" } });
    expect(resultText(own.html, "sync")).toMatch(/^Queued/);
  });
});

describe("the session cookie", () => {
  // A third layer under the two above: a POST from another site does not carry the session at all.
  // Lax, not Strict: operators arrive from the service's portal (a top-level navigation from another
  // site) and must arrive signed in; Lax still keeps the cookie off cross-site POSTs.
  it("is httpOnly and SameSite=Lax", async () => {
    const csrf = await fetch(`${stack.appUrl}/api/auth/csrf`);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const response = await fetch(`${stack.appUrl}/api/auth/callback/staff`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: csrf.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ") },
      body: new URLSearchParams({ email: env("STAFF_DEV_EMAIL"), password: env("STAFF_DEV_PASSWORD"), csrfToken, json: "true" }).toString(),
    });
    const session = response.headers.getSetCookie().find((line) => cookiePattern(PRODUCT.cookies.session).test(line));
    expect(session).toBeDefined();
    expect(session).toMatch(/;\s*HttpOnly/i);
    expect(session).toMatch(/;\s*SameSite=Lax/i);
  });
});

describe("the audit page", () => {
  it("lists the log newest first, filtered by install and by staff member, 50 a page; a bad query string is ignored, never an error", async () => {
    const install = await installed();
    const other = await installViaPortal(1002);
    const cookie = await signInOperator();
    const viewer = await signInViewer();
    // 60 lines for the first install by the operator, 3 for the other by the viewer, one second apart.
    await sql(
      `INSERT INTO staff_actions (id, staff_email, staff_role, action, install_row_id, install_id, outcome, detail, requested_at, finished_at)
       SELECT gen_random_uuid(), $1, 'operator', 'reconcile', $2, $3, 'live', 'line ' || n, now() - make_interval(secs => 100 - n), now()
       FROM generate_series(1, 60) AS n`,
      [env("STAFF_DEV_EMAIL"), install.installRowId, install.installId],
    );
    await sql(
      `INSERT INTO staff_actions (id, staff_email, staff_role, action, install_row_id, install_id, outcome, detail, requested_at, finished_at)
       SELECT gen_random_uuid(), $1, 'viewer', 'refresh', $2, $3, 'refused_role', 'other ' || n, now() - make_interval(secs => 10 - n), now()
       FROM generate_series(1, 3) AS n`,
      [env("STAFF_VIEWER_DEV_EMAIL"), other.installRowId, other.installId],
    );
    const page = async (query: string, as = cookie) => {
      const response = await fetch(`${stack.appUrl}/admin/audit${query}`, { headers: { Cookie: as } });
      expect(response.status).toBe(200);
      const html = await response.text();
      return { html, details: [...html.matchAll(/<div class="text-slate-700">([^<]*)<\/div>/g)].map((m) => m[1]!), older: /<a\b[^>]*data-testid="audit-older"[^>]*>/.exec(html)?.[0].match(/href="([^"]*)"/)?.[1] };
    };

    const first = await page("");
    expect(first.details.slice(0, 4)).toEqual(["other 3", "other 2", "other 1", "line 60"]);
    expect(first.details).toHaveLength(50);
    const second = await page(htmlDecode(first.older!).replace("/admin/audit", ""));
    expect(second.details).toEqual(Array.from({ length: 13 }, (_, i) => `line ${13 - i}`));
    expect(second.older).toBeUndefined();

    expect((await page(`?install=${other.installId}`)).details).toEqual(["other 3", "other 2", "other 1"]);
    expect((await page(`?install=${other.installRowId}`, viewer)).details).toEqual(["other 3", "other 2", "other 1"]);
    expect((await page(`?staff=${encodeURIComponent(env("STAFF_VIEWER_DEV_EMAIL").toUpperCase())}`)).details).toEqual(["other 3", "other 2", "other 1"]);
    expect((await page("?install=999999")).html).toContain('data-testid="audit-empty"');
    // At scale: 20,000 more lines, and each of the page's reads stays on its index (no scan of the log).
    await sql(
      `INSERT INTO staff_actions (id, staff_email, staff_role, action, install_row_id, install_id, outcome, detail, requested_at, finished_at)
       SELECT gen_random_uuid(), 'ops' || (n % 20) || '@partner.example', 'operator', 'reconcile', gen_random_uuid(), NULL, 'live', 'bulk', now() - make_interval(secs => 1000 + n), now()
       FROM generate_series(1, 20000) AS n`,
    );
    await sql("ANALYZE staff_actions");
    const plan = async (where: string, values: unknown[]) =>
      (await sql<{ "QUERY PLAN": string }>(`EXPLAIN SELECT * FROM staff_actions ${where} ORDER BY requested_at DESC, id DESC LIMIT 51`, values)).map((r) => r["QUERY PLAN"]).join("\n");
    expect(await plan("", [])).toContain("staff_actions_requested_at_id_idx");
    expect(await plan("WHERE install_row_id = $1", [install.installRowId])).toContain("staff_actions_install_row_id_requested_at_id_idx");
    expect(await plan("WHERE staff_email = $1", [env("STAFF_DEV_EMAIL")])).toContain("staff_actions_staff_email_requested_at_id_idx");
    expect(await plan("WHERE (requested_at < $1 OR (requested_at = $1 AND id < $2))", [new Date(), "00000000-0000-4000-8000-000000000000"])).toContain("staff_actions_requested_at_id_idx");

    for (const bad of ["?install=%00%27", "?staff=not-an-email", "?after=1_x", "?after=99999999999999999999_00000000-0000-4000-8000-000000000000", `?install=${"9".repeat(200)}&install=1`]) {
      expect((await page(bad)).details.slice(0, 1), bad).toEqual(["other 3"]);
    }
  });
});
