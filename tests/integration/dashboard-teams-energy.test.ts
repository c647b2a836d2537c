// The Teams and Energy sections (issue 13): the teams write (lib/dashboard/teams.ts) with each of
// its refusals, and the beta EVSE charge history (lib/dashboard/energy.ts) in each state its page
// explains: not enabled for the operator, no scope, data, a changed answer shape, a service error.
// The lib functions are called in this process; the pages are fetched with the operator's session.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { armApiFault, clearApiFaults, closeSql, control, installViaPortal, operatorRecords, resetWorld, sandboxEvents, setEnergyBeta, sql, stack } from "../helpers/stack";

const { syncInstall } = await import("@/lib/sync");
const { renameTeamForInstall } = await import("@/lib/dashboard/teams");
const { loadEnergy } = await import("@/lib/dashboard/energy");
const { fetchInstallSummary } = await import("@/lib/installs/dashboard");

beforeEach(resetWorld);
afterEach(clearApiFaults);
afterAll(closeSql);

const NORTHWIND = 1001;
const FJORDLINE = 1002;
const BASE_SCOPES = ["charge-points:read", "charge-transactions:read"];

/** An install granted `scopes` (registered before it exists, so nothing is flagged), its local copy made. */
async function installWith(operatorId: number, scopes: string[], options: { sync?: boolean } = {}) {
  await control("POST", "/app/scopes", { scopes });
  const install = await installViaPortal(operatorId);
  if (options.sync ?? true) await syncInstall(install.installRowId, { perPage: 100 });
  return install;
}

async function page(path: string, sessionCookie: string): Promise<{ status: number; html: string }> {
  const response = await fetch(`${stack.appUrl}${path}`, { headers: { cookie: sessionCookie } });
  return { status: response.status, html: await response.text() };
}

/** API calls the sandbox saw for the install whose path matches. */
async function apiCalls(installId: number, pattern: RegExp) {
  return (await sandboxEvents("api")).filter((e) => e.detail.install_id === installId && pattern.test(String(e.detail.path)));
}

type Team = { id: number; name: string };

describe("the teams write", () => {
  it("renames the install's team at the service and in the local copy, so the page shows the new name at once", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    const [team] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;

    const before = await page("/dashboard/teams", install.sessionCookie);
    expect(before.html).toContain(team!.name);
    expect(before.html).toContain('data-testid="rename-team-form"');

    const outcome = await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "  Depot crew  " });
    expect(outcome).toEqual({ ok: true, team: { id: String(team!.id), name: "Depot crew" } });
    const [row] = await sql<{ name: string; raw: { name: string; id: number } }>("SELECT name, raw FROM synced_teams WHERE install_row_id = $1 AND external_id = $2", [
      install.installRowId,
      String(team!.id),
    ]);
    expect(row).toMatchObject({ name: "Depot crew", raw: { id: team!.id, name: "Depot crew" } });
    expect((await operatorRecords<Team>(NORTHWIND, "teams")).data.find((t) => t.id === team!.id)?.name).toBe("Depot crew");
    expect((await page("/dashboard/teams", install.sessionCookie)).html).toContain("Depot crew");
  });

  it("refuses without teams:write, before any call: the page explains, the copy and the service keep the name", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "teams:read"]);
    const [team] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;
    const outcome = await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "Nope" });
    expect(outcome).toEqual({ ok: false, reason: "not_granted" });
    expect(await apiCalls(install.installId, /^\/api\/v1\/teams\//)).toHaveLength(0);
    expect((await operatorRecords<Team>(NORTHWIND, "teams")).data[0]!.name).toBe(team!.name);

    const { html } = await page("/dashboard/teams", install.sessionCookie);
    expect(html).toContain('data-state="not_granted"');
    expect(html).toContain("teams:write");
    expect(html).not.toContain('data-testid="rename-team-form"');
  });

  it("refuses a bad name with its reason, and a team that is not this install's (another operator's) without calling", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    const [team] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "   " })).toEqual({ ok: false, reason: "invalid", message: "Type a name." });
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "x".repeat(101) })).toMatchObject({
      ok: false,
      reason: "invalid",
      message: "A team name has at most 100 characters.",
    });
    expect(await renameTeamForInstall(install.installRowId, { teamId: "../1", name: "ok" })).toMatchObject({ ok: false, reason: "invalid" });
    const [foreign] = (await operatorRecords<Team>(FJORDLINE, "teams")).data;
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(foreign!.id), name: "Mine" })).toEqual({ ok: false, reason: "unknown_team" });
    expect(await apiCalls(install.installId, /^\/api\/v1\/teams\//)).toHaveLength(0);
  });

  it("maps the service's failures: 503 → failed/unavailable, a team deleted at the service → unknown_team, NEEDS_REAUTH → flagged", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    const [team, other] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;
    await armApiFault({ path: "/teams", mode: "error503", count: 1 });
    // A PATCH is not retried after a 5xx (it is not idempotent): one request, one failure.
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "Later" })).toMatchObject({
      ok: false,
      reason: "failed",
      failure: { kind: "unavailable" },
    });
    expect(await apiCalls(install.installId, /^\/api\/v1\/teams\//)).toHaveLength(1);

    await control("DELETE", `/operators/${NORTHWIND}/teams/${other!.id}`);
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(other!.id), name: "Gone" })).toEqual({ ok: false, reason: "unknown_team" });

    await control("POST", "/app/scopes", { scopes: [...BASE_SCOPES, "teams:write", "energy:read"] });
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "Flagged" })).toEqual({ ok: false, reason: "needs_reauth" });
    expect((await fetchInstallSummary(install.installRowId))?.status).toBe("NEEDS_REAUTH");
  });

  it("is off unless the app's configuration turns it on: the write is refused and the page offers no form", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    const [team] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;
    const run = await runAppWorker(["rename-team", install.installRowId, String(team!.id), "Off"], { DASHBOARD_MANAGE_TEAMS: "off" });
    expect(resultOf(run)).toEqual({ ok: false, reason: "feature_off" });
    expect(await apiCalls(install.installId, /^\/api\/v1\/teams\//)).toHaveLength(0);
  });

  it("says the teams are being copied before the first pass ended, and that they are not readable without a teams scope", async () => {
    const copying = await installWith(NORTHWIND, [...BASE_SCOPES, "teams:write"], { sync: false });
    expect((await page("/dashboard/teams", copying.sessionCookie)).html).toContain('data-state="copying"');
    await resetWorld();
    const noScope = await installWith(NORTHWIND, BASE_SCOPES);
    const { status, html } = await page("/dashboard/teams", noScope.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain("You have not allowed this app to see your teams");
  });
});

type ChargePoint = { id: number; name: string | null; evseId: string; connectors: { id: number }[] };
type Charge = { id: number; chargePointId: number; consumedKwh: number };


describe("the energy beta", () => {
  it("off for the operator: the page explains the beta and how to ask for it, not an error", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    const { status, html } = await page("/dashboard/energy", install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-state="not_enabled"');
    expect(html).toContain("business partner contact");
    expect((await apiCalls(install.installId, /^\/api\/v1\/energy\//))[0]?.detail).toMatchObject({ status: 403, error_code: "FEATURE_NOT_ENABLED" });
  });

  it("on: the history of the chosen EVSE, its total matching the sandbox's charges, and the chart", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    await setEnergyBeta(NORTHWIND, { enabled: true });
    const charges = (await operatorRecords<Charge>(NORTHWIND, "charges")).data;
    // The view picks an EVSE with sessions: walk the options until one has some.
    const first = await loadEnergy({ id: install.installRowId, grantedScopes: [...BASE_SCOPES, "energy:read"] }, {});
    expect(first.state).toBe("ok");
    if (first.state !== "ok") return;
    let chosen = first;
    for (const evse of first.evses) {
      const view = await loadEnergy({ id: install.installRowId, grantedScopes: ["energy:read"] }, { evse: evse.key });
      if (view.state === "ok" && view.records.length > 0) {
        chosen = view;
        break;
      }
    }
    expect(chosen.records.length).toBeGreaterThan(0);
    const cpId = Number(chosen.selected.chargePointId);
    const connectors = (await operatorRecords<ChargePoint>(NORTHWIND, "charge-points")).data.find((cp) => cp.id === cpId)!.connectors;
    const index = connectors.findIndex((c) => String(c.id) === chosen.selected.connectorId);
    const expected = charges.filter((c) => c.chargePointId === cpId && c.id % connectors.length === index);
    expect(chosen.records.map((r) => r.chargeId).sort()).toEqual(expected.map((c) => String(c.id)).sort());
    expect(chosen.totalKwh).toBeCloseTo(expected.reduce((s, c) => s + c.consumedKwh, 0), 2);
    expect(chosen.days.reduce((s, d) => s + d.sessions, 0)).toBe(expected.length);

    const { status, html } = await page(`/dashboard/energy?evse=${encodeURIComponent(chosen.selected.key)}`, install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-state="ok"');
    expect(html).toContain('data-testid="energy-chart"');
  });

  it("an EVSE of another operator in the address is never asked for: the page falls back to the install's own first EVSE", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    await setEnergyBeta(NORTHWIND, { enabled: true });
    const foreign = (await operatorRecords<ChargePoint>(FJORDLINE, "charge-points")).data[0]!;
    const view = await loadEnergy({ id: install.installRowId, grantedScopes: ["energy:read"] }, { evse: `${foreign.id}:${foreign.connectors[0]!.id}` });
    expect(view.state).toBe("ok");
    if (view.state !== "ok") return;
    expect(view.selected.key).toBe(view.evses[0]!.key);
    expect(view.evses.some((e) => e.chargePointId === String(foreign.id))).toBe(false);
    const paths = (await apiCalls(install.installId, /^\/api\/v1\/energy\//)).map((e) => String(e.detail.path));
    expect(paths).toHaveLength(1);
    expect(paths[0]).not.toContain(`/charge-points/${foreign.id}/`);
  });

  it("energy:read not granted: the page explains, and the operation is never called", async () => {
    const install = await installWith(NORTHWIND, BASE_SCOPES);
    await setEnergyBeta(NORTHWIND, { enabled: true });
    const { status, html } = await page("/dashboard/energy", install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-state="not_granted"');
    expect(html).toContain("energy:read");
    expect(await apiCalls(install.installId, /^\/api\/v1\/energy\//)).toHaveLength(0);
  });

  it("a changed answer shape: the \"not understood\" state, not a 500", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    await setEnergyBeta(NORTHWIND, { enabled: true, shape: "changed" });
    const { status, html } = await page("/dashboard/energy", install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-state="not_understood"');
    expect(html).toContain("does not understand yet");
  });

  it("a service error and a bad range each get their own sentence", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    await setEnergyBeta(NORTHWIND, { enabled: true });
    await armApiFault({ path: "/energy", mode: "error503", forMs: 60_000 });
    const failed = await page("/dashboard/energy", install.sessionCookie);
    expect(failed.status).toBe(200);
    expect(failed.html).toMatch(/data-state="failed" data-reason="unavailable"/);
    const range = await page("/dashboard/energy?from=2025-03-01&to=2025-02-01", install.sessionCookie);
    expect(range.html).toContain('data-state="bad_range"');
  });

  it("before the charge points are copied, says so instead of calling", async () => {
    const install = await installWith(NORTHWIND, [...BASE_SCOPES, "energy:read"], { sync: false });
    await setEnergyBeta(NORTHWIND, { enabled: true });
    expect((await page("/dashboard/energy", install.sessionCookie)).html).toContain('data-state="no_evses"');
    expect(await apiCalls(install.installId, /^\/api\/v1\/energy\//)).toHaveLength(0);
  });
});
