// The Energy section (an optional section: app/dashboard/sections.ts): the beta EVSE charge history
// (lib/dashboard/energy.ts, contract §4.3) in each state its page explains: not enabled for the
// operator, no scope, data, a changed answer shape, a service error. The lib read is called in this
// process; the page is fetched with the operator's session. These tests live in the section's folder,
// so removing the section (its folder and its registry entry) removes them too.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { armApiFault, clearApiFaults, closeSql, control, operatorRecords, resetWorld, sandboxEvents, setEnergyBeta, sql, stack } from "../../../../tests/helpers/stack";
import { apiCallsOf, dashboardPage, installWithScopes } from "../../../../tests/helpers/dashboard";

const { loadEnergy } = await import("@/lib/dashboard/energy");

beforeEach(resetWorld);
afterEach(clearApiFaults);
afterAll(closeSql);

const NORTHWIND = 1001;
const FJORDLINE = 1002;
const BASE_SCOPES = ["charge-points:read", "charge-transactions:read"];


type ChargePoint = { id: number; name: string | null; evseId: string; connectors: { id: number }[] };
type Charge = { id: number; chargePointId: number; consumedKwh: number };

describe("the energy beta", () => {
  it("off for the operator: the page explains the beta and how to ask for it, not an error", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    const { status, html } = await dashboardPage("/dashboard/energy", install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-state="not_enabled"');
    expect(html).toContain("business partner contact");
    expect((await apiCallsOf(install.installId, /^\/api\/v1\/energy\//))[0]?.detail).toMatchObject({ status: 403, error_code: "FEATURE_NOT_ENABLED" });
  });

  it("on: the history of the chosen EVSE, its total matching the sandbox's charges, and the chart", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
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

    const { status, html } = await dashboardPage(`/dashboard/energy?evse=${encodeURIComponent(chosen.selected.key)}`, install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-state="ok"');
    expect(html).toContain('data-testid="energy-chart"');
  });

  it("an EVSE of another operator in the address is never asked for: the page falls back to the install's own first EVSE", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    await setEnergyBeta(NORTHWIND, { enabled: true });
    const foreign = (await operatorRecords<ChargePoint>(FJORDLINE, "charge-points")).data[0]!;
    const view = await loadEnergy({ id: install.installRowId, grantedScopes: ["energy:read"] }, { evse: `${foreign.id}:${foreign.connectors[0]!.id}` });
    expect(view.state).toBe("ok");
    if (view.state !== "ok") return;
    expect(view.selected.key).toBe(view.evses[0]!.key);
    expect(view.evses.some((e) => e.chargePointId === String(foreign.id))).toBe(false);
    const paths = (await apiCallsOf(install.installId, /^\/api\/v1\/energy\//)).map((e) => String(e.detail.path));
    expect(paths).toHaveLength(1);
    expect(paths[0]).not.toContain(`/charge-points/${foreign.id}/`);
  });

  it("energy:read not granted: the page explains, and the operation is never called", async () => {
    const install = await installWithScopes(NORTHWIND, BASE_SCOPES);
    await setEnergyBeta(NORTHWIND, { enabled: true });
    const { status, html } = await dashboardPage("/dashboard/energy", install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-state="not_granted"');
    expect(html).toContain("energy:read");
    expect(await apiCallsOf(install.installId, /^\/api\/v1\/energy\//)).toHaveLength(0);
  });

  it("while re-authorization is pending, the page says it is paused and calls nothing", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    await setEnergyBeta(NORTHWIND, { enabled: true });
    await control("POST", `/installs/${install.installId}/flag-reauth`);
    // The app learns of the flag as it would on any call: here the install check, made due.
    await sql("UPDATE installs SET last_reconciled_at = NULL WHERE id = $1", [install.installRowId]);
    await fetch(`${stack.appUrl}/api/cron/reconcile`, { method: "POST", headers: { Authorization: `Bearer ${process.env.CRON_SECRET}` } });
    const before = (await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId).length;
    const { status, html } = await dashboardPage("/dashboard/energy", install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-testid="reauth-banner"');
    expect(html).toContain('data-state="paused"');
    expect((await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId).length).toBe(before);
  });

  it("a changed answer shape: the \"not understood\" state, not a 500", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    await setEnergyBeta(NORTHWIND, { enabled: true, shape: "changed" });
    const { status, html } = await dashboardPage("/dashboard/energy", install.sessionCookie);
    expect(status).toBe(200);
    expect(html).toContain('data-state="not_understood"');
    expect(html).toContain("does not understand yet");
  });

  it("a service error and a bad range each get their own sentence", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "energy:read"]);
    await setEnergyBeta(NORTHWIND, { enabled: true });
    await armApiFault({ path: "/energy", mode: "error503", forMs: 60_000 });
    const failed = await dashboardPage("/dashboard/energy", install.sessionCookie);
    expect(failed.status).toBe(200);
    expect(failed.html).toMatch(/data-state="failed" data-reason="unavailable"/);
    const range = await dashboardPage("/dashboard/energy?from=2025-03-01&to=2025-02-01", install.sessionCookie);
    expect(range.html).toContain('data-state="bad_range"');
  });

  it("before the charge points are copied, says so instead of calling", async () => {
    const install = await installWithScopes(NORTHWIND, [...BASE_SCOPES, "energy:read"], { sync: false });
    await setEnergyBeta(NORTHWIND, { enabled: true });
    expect((await dashboardPage("/dashboard/energy", install.sessionCookie)).html).toContain('data-state="no_evses"');
    expect(await apiCallsOf(install.installId, /^\/api\/v1\/energy\//)).toHaveLength(0);
  });
});
