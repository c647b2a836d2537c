// Webhooks are only an accelerator (contract §6): what the app does when one never arrives, and the
// lifecycle events the sandbox sends for real (install.revoked, install.config.updated, replays).
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, control, installViaPortal, resetWorld, sandboxEvents, sql, stack } from "../helpers/stack";

const { purgeRevokedInstallData, purgeInstallData } = await import("@/lib/sync/retention");
const DAY_MS = 24 * 60 * 60 * 1000;

beforeEach(resetWorld);
afterAll(closeSql);

function cron(job: "reconcile" | "keep-alive", authorization?: string) {
  return fetch(`${stack.appUrl}/api/cron/${job}`, {
    method: "POST",
    headers: authorization === undefined ? {} : { Authorization: authorization },
  });
}
/** One synced team for the install: its data copy, as a sync would have left it. */
async function syncedTeam(installRowId: string) {
  await sql("INSERT INTO synced_teams (install_row_id, external_id, raw, first_seen_at, last_seen_at, updated_at) VALUES ($1, '1', '{}', now(), now(), now())", [installRowId]);
}
async function syncedTeams(installRowId: string) {
  return (await sql<{ n: number }>("SELECT count(*)::int AS n FROM synced_teams WHERE install_row_id = $1", [installRowId]))[0]!.n;
}
async function dashboard(sessionCookie: string, path = "/dashboard") {
  return (await fetch(`${stack.appUrl}${path}`, { headers: { cookie: sessionCookie } })).text();
}
async function status(installId: number) {
  return (await sql<{ status: string }>("SELECT status FROM installs WHERE install_id = $1", [installId]))[0]?.status;
}

describe("cron routes", () => {
  it("refuse callers without the scheduler's secret", async () => {
    expect((await cron("reconcile")).status).toBe(401);
    expect((await cron("reconcile", "Bearer wrong")).status).toBe(401);
    expect((await cron("keep-alive", `Basic ${process.env.CRON_SECRET}`)).status).toBe(401);
    const ok = await cron("keep-alive", `Bearer ${process.env.CRON_SECRET}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ job: "keep-alive", due: 0, enqueued: 0, worked: 0, more: false });
  });
});

describe("a dropped install.revoked", () => {
  it("is caught by the next reconcile sweep; a replay of it then marks the install revoked", async () => {
    const install = await installViaPortal(1001);
    const other = await installViaPortal(1002);
    await control("POST", "/webhook-modes", { type: "install.revoked", mode: "drop", count: 1 });
    await control("POST", `/installs/${install.installId}/revoke`);
    expect(await status(install.installId)).toBe("ACTIVE"); // the app was not told

    await sql("UPDATE installs SET last_reconciled_at = NULL");
    const sweep = await cron("reconcile", `Bearer ${process.env.CRON_SECRET}`);
    // One job per install, each worked in this call (lib/jobs/engine.ts runJobNow).
    expect(await sweep.json()).toMatchObject({ job: "reconcile", due: 2, enqueued: 2, worked: 2, outcomes: { live: 1, unusable: 1 } });
    // A 401 and a failed refresh: the app cannot tell an uninstall from a revoked chain
    // (docs/spec-gaps.md A19) and stops using the install either way.
    expect(await status(install.installId)).toBe("REINSTALL_NEEDED");
    expect(await status(other.installId)).toBe("ACTIVE");
    const callsAfterSweep = (await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId).length;
    await sql("UPDATE installs SET last_reconciled_at = NULL");
    await cron("reconcile", `Bearer ${process.env.CRON_SECRET}`);
    expect((await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId).length).toBe(callsAfterSweep);

    // The service operator replays the dropped delivery on request (contract §5.7).
    const { deliveries } = await control<{ deliveries: { detail: { delivery_id: string; mode: string | null } }[] }>(
      "GET",
      `/deliveries?install_id=${install.installId}&event_type=install.revoked`,
    );
    expect(deliveries.map((d) => d.detail.mode)).toEqual(["drop"]);
    await control("POST", `/deliveries/${deliveries[0]!.detail.delivery_id}/replay`);
    expect(await status(install.installId)).toBe("REVOKED");
    expect(await sql("SELECT g.id FROM token_grants g JOIN installs i ON i.id = g.install_row_id WHERE i.install_id = $1", [install.installId])).toEqual([]);
  });

  it("unreplayed, the operator is told it may be an uninstall, and the data copy is deleted after the retention period (A209)", async () => {
    const install = await installViaPortal(1001);
    await syncedTeam(install.installRowId);
    await control("POST", "/webhook-modes", { type: "install.revoked", mode: "drop", count: 1 });
    await control("POST", `/installs/${install.installId}/revoke`);
    await sql("UPDATE installs SET last_reconciled_at = NULL");
    await cron("reconcile", `Bearer ${process.env.CRON_SECRET}`);
    expect(await status(install.installId)).toBe("REINSTALL_NEEDED");
    // The app presented its newest refresh token once, and it was refused: the app lost nothing itself.
    const [event] = await sql<{ detail: string; occurred_at: Date }>(
      "SELECT e.detail, e.occurred_at FROM install_events e JOIN installs i ON i.id = e.install_row_id WHERE i.install_id = $1 AND e.to_status = 'REINSTALL_NEEDED'",
      [install.installId],
    );
    expect(event!.detail).toContain("most likely the operator uninstalled the app");

    const page = await dashboard(install.sessionCookie);
    expect(page).toContain("If you uninstalled the app");
    const deletedOn = new Date(event!.occurred_at.getTime() + 30 * DAY_MS).toISOString().slice(0, 10);
    expect(page).toContain(`data-deleted-on="${deletedOn}"`);

    // SYNC_RETENTION_DAYS (30) after the install was lost, as after an uninstall.
    expect(await purgeRevokedInstallData({ now: new Date(Date.now() + 29 * DAY_MS) })).toMatchObject({ installs: 0 });
    expect(await syncedTeams(install.installRowId)).toBe(1);
    expect(await purgeRevokedInstallData({ now: new Date(Date.now() + 31 * DAY_MS) })).toMatchObject({ installs: 1, deleted: { synced_teams: 1 } });
    expect(await syncedTeams(install.installRowId)).toBe(0);
  });

  it("the purge leaves an install alone once it is connected again", async () => {
    const install = await installViaPortal(1001);
    await syncedTeam(install.installRowId);
    // Due by its row (a reconnect can land between the due query and the purge job).
    expect(await purgeInstallData(install.installRowId)).toMatchObject({ deleted: { synced_teams: 0 }, stoppedEarly: false });
    expect(await syncedTeams(install.installRowId)).toBe(1);
  });
});

describe("install.config.updated", () => {
  it("stores the operator's configuration and shows it on the dashboard's settings page", async () => {
    const install = await installViaPortal(1001);
    await control("POST", `/installs/${install.installId}/config`, { currency: "NOK", syncCharges: false });
    const [row] = await sql<{ config: Record<string, unknown> }>("SELECT config FROM installs WHERE install_id = $1", [install.installId]);
    expect(row!.config).toMatchObject({ currency: "NOK", syncCharges: false });
    const page = await (await fetch(`${stack.appUrl}/dashboard/settings`, { headers: { cookie: install.sessionCookie } })).text();
    expect(page).toContain('data-testid="install-config"');
    expect(page).toContain("NOK");
  });

  it("a lost one cannot be read back from the API (A210): the settings page says what the app last received and how to send it again", async () => {
    const install = await installViaPortal(1001);
    await control("POST", "/webhook-modes", { type: "install.config.updated", mode: "drop", count: 1 });
    await control("POST", `/installs/${install.installId}/config`, { syncCharges: false });
    await sql("UPDATE installs SET last_reconciled_at = NULL");
    await cron("reconcile", `Bearer ${process.env.CRON_SECRET}`);
    expect((await sql<{ config: unknown }>("SELECT config FROM installs WHERE install_id = $1", [install.installId]))[0]!.config).toBeNull();
    expect(await dashboard(install.sessionCookie, "/dashboard/settings")).toContain('data-testid="config-not-received"');

    // The operator saves it again on the portal: a new install.config.updated (contract §6).
    await control("POST", `/installs/${install.installId}/config`, { syncCharges: false });
    const settings = await dashboard(install.sessionCookie, "/dashboard/settings");
    expect(settings).toContain('data-testid="config-received"');
    expect(settings).not.toContain('data-testid="config-not-received"');
  });
});
