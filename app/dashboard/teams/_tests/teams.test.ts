// The Teams section (an optional section: app/dashboard/sections.ts): the teams write
// (lib/dashboard/teams.ts) with each of its refusals, and the page's states before the first copy and
// without a teams scope. The lib functions are called in this process; the page is fetched with the
// operator's session. These tests live in the section's folder, so removing the section (its folder
// and its registry entry) removes them too.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../../../../tests/helpers/app-process";
import { armApiFault, clearApiFaults, closeSql, control, operatorRecords, resetWorld, sandboxEvents, sql, stack } from "../../../../tests/helpers/stack";
import { apiCallsOf, dashboardPage, installWithScopes } from "../../../../tests/helpers/dashboard";

const { renameTeamForInstall } = await import("@/lib/dashboard/teams");
const { fetchInstallSummary } = await import("@/lib/installs/dashboard");

beforeEach(resetWorld);
afterEach(clearApiFaults);
afterAll(closeSql);

const NORTHWIND = 1001;
const FJORDLINE = 1002;
const BASE_SCOPES = ["charge-points:read", "charge-transactions:read"];


type Team = { id: number; name: string };

describe("the teams write", () => {
  it("renames the install's team at the service and in the local copy, so the page shows the new name at once", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    const [team] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;

    const before = await dashboardPage("/dashboard/teams", install.sessionCookie);
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
    expect((await dashboardPage("/dashboard/teams", install.sessionCookie)).html).toContain("Depot crew");
  });

  it("refuses without teams:write, before any call: the page explains, the copy and the service keep the name", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "teams:read"]);
    const [team] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;
    const outcome = await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "Nope" });
    expect(outcome).toEqual({ ok: false, reason: "not_granted" });
    expect(await apiCallsOf(install.installId, /^\/api\/v1\/teams\//)).toHaveLength(0);
    expect((await operatorRecords<Team>(NORTHWIND, "teams")).data[0]!.name).toBe(team!.name);

    const { html } = await dashboardPage("/dashboard/teams", install.sessionCookie);
    expect(html).toContain('data-state="not_granted"');
    expect(html).toContain("teams:write");
    expect(html).not.toContain('data-testid="rename-team-form"');
  });

  it("refuses a bad name with its reason, and a team that is not this install's (another operator's) without calling", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
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
    expect(await apiCallsOf(install.installId, /^\/api\/v1\/teams\//)).toHaveLength(0);
  });

  it("maps the service's failures: 503 → failed/unavailable, a team deleted at the service → unknown_team, NEEDS_REAUTH → flagged", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    const [team, other] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;
    await armApiFault({ path: "/teams", mode: "error503", count: 1 });
    // A PATCH is not retried after a 5xx (it is not idempotent): one request, one failure.
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "Later" })).toMatchObject({
      ok: false,
      reason: "failed",
      failure: { kind: "unavailable" },
    });
    expect(await apiCallsOf(install.installId, /^\/api\/v1\/teams\//)).toHaveLength(1);

    await control("DELETE", `/operators/${NORTHWIND}/teams/${other!.id}`);
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(other!.id), name: "Gone" })).toEqual({ ok: false, reason: "unknown_team" });

    await control("POST", "/app/scopes", { scopes: [...BASE_SCOPES, "teams:write", "energy:read"] });
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "Flagged" })).toEqual({ ok: false, reason: "needs_reauth" });
    expect((await fetchInstallSummary(install.installRowId))?.status).toBe("NEEDS_REAUTH");
  });

  it("is off unless the app's configuration turns it on: the write is refused and the page offers no form", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    const [team] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;
    const run = await runAppWorker([install.installRowId, String(team!.id), "Off"], { DASHBOARD_MANAGE_TEAMS: "off" }, "app/dashboard/teams/_tests/rename-worker.ts");
    expect(resultOf(run)).toEqual({ ok: false, reason: "feature_off" });
    expect(await apiCallsOf(install.installId, /^\/api\/v1\/teams\//)).toHaveLength(0);
  });

  it("while re-authorization is pending, the list is the copy, read-only: no rename form, and the write is refused without a call", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    await control("POST", `/installs/${install.installId}/flag-reauth`);
    await sql("UPDATE installs SET last_reconciled_at = NULL WHERE id = $1", [install.installRowId]);
    await fetch(`${stack.appUrl}/api/cron/reconcile`, { method: "POST", headers: { Authorization: `Bearer ${process.env.CRON_SECRET}` } });
    const before = (await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId).length;
    const { status, html } = await dashboardPage("/dashboard/teams", install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-testid="read-only-notice"');
    expect(html).toContain('data-testid="teams"');
    expect(html).toContain('data-state="paused"');
    expect(html).not.toContain('data-testid="rename-team-form"');
    const [team] = (await operatorRecords<Team>(NORTHWIND, "teams")).data;
    expect(await renameTeamForInstall(install.installRowId, { teamId: String(team!.id), name: "Depot crew" })).toEqual({ ok: false, reason: "needs_reauth" });
    expect((await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId).length).toBe(before);
  });

  it("shows each team's own changed date from the service, not the copy's, and words teams:write as the rename it is", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "teams:write"]);
    const teams = (await operatorRecords<Team & { updatedAt: string }>(NORTHWIND, "teams")).data;
    // The copy was made now; every team changed at the service long before (the seed is in 2025).
    const html = (await dashboardPage("/dashboard/teams", install.sessionCookie)).html.replace(/<!-- -->/g, "");
    const day = new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", dateStyle: "medium" });
    for (const team of teams) {
      const item = new RegExp(`data-team-id="${team.id}".*?</li>`, "s").exec(html)![0];
      expect(item).toContain(`changed ${day.format(new Date(team.updatedAt))}`);
    }
    expect(html).not.toContain(`changed ${day.format(new Date())}`);
    // The granted scopes in words are on the Settings and access page.
    const settings = (await dashboardPage("/dashboard/settings", install.sessionCookie)).html.replace(/<!-- -->/g, "");
    expect(settings).toContain(">Rename your teams<");
    expect(html).not.toContain("create your teams");
  });

  it("says the teams are being copied before the first pass ended, and that they are not readable without a teams scope", async () => {
    const copying = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "teams:write"], { sync: false });
    expect((await dashboardPage("/dashboard/teams", copying.sessionCookie)).html).toContain('data-state="copying"');
    await resetWorld();
    const noScope = await installWithScopes(NORTHWIND, BASE_SCOPES);
    const { status, html } = await dashboardPage("/dashboard/teams", noScope.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain("You have not allowed this app to see your teams");
  });
});

