// Faults in the service's answers and in clocks that must not freeze or stall an install (issue 34):
// an implausible RateLimit-ResetsIn, a record carrying text PostgreSQL refuses, and runs stamped by
// a clock that ran ahead. Each through the sandbox's real API (its faults and record edits).
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import {
  apiRequestCounts,
  armApiFault,
  changeSandboxRecord,
  clearApiFaults,
  closeSql,
  expireAccessToken,
  installViaPortal,
  operatorRecords,
  resetWorld,
  sql,
  stack,
  tokenCalls,
} from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

const { withAccessToken } = await import("@/lib/oauth/access");
const { fetchChargePoints } = await import("@/lib/partner-api/client");
const budget = await import("@/lib/partner-api/budget");
const { fetchBudgetStatus, fetchSyncStatus } = await import("@/lib/admin/timeline");
const { syncInstall } = await import("@/lib/sync");
const { findInstallsDueForSync } = await import("@/lib/jobs/sync-jobs");
const { openTokenCircuit } = await import("@/lib/oauth/circuit");

beforeEach(resetWorld);
afterEach(clearApiFaults);
afterAll(closeSql);

const NORTHWIND = 1001;
const FAR_FUTURE = 99_999_999_999; // seconds: the year 5138
const readPage = (installRowId: string) => withAccessToken(installRowId, (token, call) => fetchChargePoints(token, call, { page: 0, perPage: 1 }));
/** How far ahead of the database's clock the install's budget is held, in seconds. */
const heldForSeconds = async (installRowId: string) =>
  (await sql<{ s: number }>("SELECT extract(epoch FROM tat - clock_timestamp())::float8 AS s FROM api_budgets WHERE install_row_id = $1", [installRowId]))[0]!.s;

describe("a rate-limit header that says to wait for years", () => {
  it("a 429 with RateLimit-ResetsIn 99999999999 holds the install at most the contract's 60 s window, staff see what was said, and clearing it frees every process", async () => {
    const install = await installViaPortal(NORTHWIND);
    await armApiFault({ path: "/charge-points", mode: "rate-limited", count: 1, installId: install.installId, resetsIn: FAR_FUTURE });
    await expect(readPage(install.installRowId)).rejects.toMatchObject({ kind: "rate_limited" });

    // Held for the window (plus the budget's burst paced out after it), not until the year 5138.
    const held = await heldForSeconds(install.installRowId);
    expect(held).toBeGreaterThan(50);
    expect(held).toBeLessThanOrEqual(70);
    // Staff read the hold and what the service said, on the install's page.
    const status = await fetchBudgetStatus(install.installRowId);
    expect(status?.hold?.serviceSaid).toBe(`429 with RateLimit-ResetsIn: ${FAR_FUTURE}`);
    expect(status!.hold!.until.getTime() - Date.now()).toBeLessThanOrEqual(61_000);

    // The staff action's domain half: the row and this process (which saw the 429) agree at once.
    await budget.clearBudgetHold(install.installRowId);
    expect((await fetchBudgetStatus(install.installRowId))?.hold).toBeNull();
    await expect(readPage(install.installRowId)).resolves.toMatchObject({ data: expect.any(Array) });
    const counts = await apiRequestCounts(install.installId);
    expect(counts.byStatus["429"]).toBe(1);
  }, scaled(60_000));

  it("a success with Remaining 0 and a huge ResetsIn is capped at the window too", async () => {
    const install = await installViaPortal(NORTHWIND);
    const grant = await budget.takeBudget(install.installRowId, "background", Date.now() + 5_000);
    await budget.observeAnswer(install.installRowId, grant, { remaining: 0, resetsInSeconds: FAR_FUTURE });
    const held = await heldForSeconds(install.installRowId);
    expect(held).toBeGreaterThan(50);
    expect(held).toBeLessThanOrEqual(70);
    expect((await fetchBudgetStatus(install.installRowId))?.hold?.serviceSaid).toBe(`RateLimit-Remaining: 0, RateLimit-ResetsIn: ${FAR_FUTURE}`);
  }, scaled(60_000));
});

describe("the console's rate budget", () => {
  const htmlDecode = (value: string) => value.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  const page = async (cookie: string, installRowId: string) => (await fetch(`${stack.appUrl}/admin/installs/${installRowId}`, { headers: { Cookie: cookie } })).text();
  /** The hidden fields of the page's form for `action` (React's action id among them), or undefined when not offered. */
  const formFields = (html: string, action: string) => {
    const form = new RegExp(`<form\\b[^>]*\\bdata-action="${action}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
    if (!form) return undefined;
    return [...form[1]!.matchAll(/<input\b[^>]*>/g)].flatMap((input) => {
      const attribute = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(input[0])?.[1];
      return attribute("type") === "hidden" && attribute("name") !== undefined ? [[htmlDecode(attribute("name")!), htmlDecode(attribute("value") ?? "")] as const] : [];
    });
  };

  it("shows the hold and what the service said, and an operator's “Clear the rate-limit hold” ends it, audited", async () => {
    const install = await installViaPortal(NORTHWIND);
    await armApiFault({ path: "/charge-points", mode: "rate-limited", count: 1, installId: install.installId, resetsIn: FAR_FUTURE });
    await expect(readPage(install.installRowId)).rejects.toMatchObject({ kind: "rate_limited" });
    const signedIn = await signInStaffWithFetch(process.env.STAFF_DEV_EMAIL!, process.env.STAFF_DEV_PASSWORD!);
    const cookie = signedIn.sessionCookie!;

    const held = await page(cookie, install.installRowId);
    expect(htmlDecode(held).replaceAll("<!-- -->", "")).toContain(`the service said “429 with RateLimit-ResetsIn: ${FAR_FUTURE}”`);
    const fields = formFields(held, "clear_budget_hold");
    expect(fields).toBeDefined();
    const body = new FormData();
    for (const [name, value] of fields!) body.append(name, value);
    const answer = await fetch(`${stack.appUrl}/admin/installs/${install.installRowId}`, { method: "POST", body, redirect: "manual", headers: { Origin: stack.appUrl, Cookie: cookie } });
    expect(answer.status).toBe(200);
    expect(htmlDecode(await answer.text())).toContain("Cleared: the install's rate budget is whole again");

    expect(await heldForSeconds(install.installRowId)).toBeLessThanOrEqual(0);
    const after = await page(cookie, install.installRowId);
    expect(after).not.toContain('data-testid="budget-hold"');
    expect(formFields(after, "clear_budget_hold")).toBeUndefined();
    const audit = await sql<{ action: string; outcome: string }>("SELECT action, outcome FROM staff_actions WHERE install_row_id = $1", [install.installRowId]);
    expect(audit).toEqual([{ action: "clear_budget_hold", outcome: "cleared" }]);
  }, scaled(60_000));
});

describe("a synced record with text PostgreSQL refuses", () => {
  it("a NUL in a charge's stop reason and a lone surrogate in a charge point's name: the rest of the sync goes on, the text is made safe, the records counted", async () => {
    const install = await installViaPortal(NORTHWIND);
    const [charge] = (await operatorRecords<{ id: number }>(NORTHWIND, "charges")).data;
    const [point] = (await operatorRecords<{ id: number }>(NORTHWIND, "charge-points")).data;
    await changeSandboxRecord(NORTHWIND, "charges", charge!.id, { stopReason: "North\u0000wind" });
    await changeSandboxRecord(NORTHWIND, "charge-points", point!.id, { name: "Bay \ud800 1" });

    const summary = await syncInstall(install.installRowId, { perPage: 5 });
    expect(summary.outcome).toBe("completed");
    const byName = Object.fromEntries(summary.resources.map((r) => [r.resource, r]));
    // (The stack's installs are granted no teams scope: that list is skipped.)
    expect(byName.charge_points).toMatchObject({ outcome: "completed", recordsCleaned: 1 });
    expect(byName.charges).toMatchObject({ outcome: "completed", recordsCleaned: 1 });

    const [chargeRow] = await sql<{ stop_reason: string }>("SELECT raw->>'stopReason' AS stop_reason FROM synced_charges WHERE install_row_id = $1 AND external_id = $2", [
      install.installRowId,
      String(charge!.id),
    ]);
    expect(chargeRow).toEqual({ stop_reason: "North\ufffdwind" });
    const [pointRow] = await sql<{ name: string }>("SELECT name FROM synced_charge_points WHERE install_row_id = $1 AND external_id = $2", [install.installRowId, String(point!.id)]);
    expect(pointRow).toEqual({ name: "Bay \ufffd 1" });
    // Every other charge is there too.
    const [{ n }] = (await sql<{ n: number }>("SELECT count(*)::int AS n FROM synced_charges WHERE install_row_id = $1", [install.installRowId])) as [{ n: number }];
    expect(n).toBe((await operatorRecords(NORTHWIND, "charges")).total);
    // Staff see it in the sync status of the install's page.
    const status = Object.fromEntries((await fetchSyncStatus(install.installRowId)).map((s) => [s.resource, s]));
    expect(status.charge_points?.lastRun?.recordsCleaned).toBe(1);
    expect(status.charges?.lastRun?.recordsCleaned).toBe(1);
  }, scaled(60_000));
});

describe("a clock that ran ahead and came back", () => {
  it("runs stamped two hours ahead do not keep the install from being due for its sync", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInstall(install.installRowId, { perPage: 50, now: new Date(Date.now() + 2 * 3_600_000) });
    expect(await findInstallsDueForSync(new Date())).toContain(install.installRowId);
    // A run stamped now still counts: the install is not due twice.
    await syncInstall(install.installRowId, { perPage: 50 });
    expect(await findInstallsDueForSync(new Date())).not.toContain(install.installRowId);
  }, scaled(60_000));
});

describe("an open token circuit", () => {
  type CallSummary = { ok: number; errors: Record<string, number> };
  const circuit = async () => (await sql<{ circuit_open: boolean; opened_at: Date }>("SELECT circuit_open, opened_at FROM oauth_client_health"))[0];
  const probeDue = () => sql("UPDATE oauth_client_health SET updated_at = now() - interval '11 minutes'");

  it("lets one refresh through every 10 minutes: a passing invalid_client ends without a configuration change", async () => {
    const { installRowId } = await installViaPortal(NORTHWIND);
    await expireAccessToken(installRowId, false);
    await openTokenCircuit("invalid_client"); // with the right secret configured: the identity provider's passing fault
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "2"])).errors).toEqual({ TokenCircuitOpenError: 2 });
    expect((await tokenCalls()).refresh_token).toBe(0);

    await probeDue();
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(1);
    expect((await tokenCalls()).refresh_token).toBe(1);
    expect((await circuit())?.circuit_open).toBe(false);
  }, scaled(60_000));

  it("a probe refused again re-opens the same incident: one token request, the opening time kept", async () => {
    const { installRowId } = await installViaPortal(NORTHWIND);
    await expireAccessToken(installRowId, false);
    const wrongSecret = { OAUTH_CLIENT_SECRET: "not-the-registered-secret" };
    resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"], wrongSecret));
    const opened = await circuit();
    expect(opened?.circuit_open).toBe(true);
    await probeDue();
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"], wrongSecret)).errors).toEqual({ TokenCircuitOpenError: 3 });
    expect((await tokenCalls()).refresh_token).toBe(2); // the first refusal, and one probe
    expect(await circuit()).toEqual(opened);
  }, scaled(60_000));
});
