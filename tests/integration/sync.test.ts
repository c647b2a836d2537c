// The sync of each install's data (issue 12; lib/sync/): local copies of the operator's teams,
// charge points and charges, a checkpoint committed with every page, deletion detection, incremental
// passes, the install's state and configuration honoured, and retention after an uninstall.
//
// The sync is called directly (plain functions), in this process or, where a test needs a process
// that stops or dies at a chosen page, in tests/helpers/app-worker.ts. Pages of 5 records make
// Northwind's 23 charge points 5 pages and its 36 charges 8 pages. The sandbox's event log has every
// API request's path, so "never read a finished page again" is a count of paths.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { armApiFault, changeSandboxRecord, clearApiFaults, closeSql, control, expireAccessToken, installViaPortal, resetWorld, sandboxEvents, setDefaultRateLimit, sql, stack, tokenCalls } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

const { syncInstall, purgeRevokedInstallData } = await import("@/lib/sync");

/**
 * The resources this file is about (the template's three). A fork's own resources, registered in
 * lib/sync/resources.ts, run in the same syncs and have their own tests, so the assertions on every
 * run's rows below look at these three only.
 */
const SHIPPED = ["teams", "charge_points", "charges"];
const shipped = <T extends { resource: string }>(rows: T[]) => rows.filter((row) => SHIPPED.includes(row.resource));
const { markUnlistedDeleted } = await import("@/lib/sync/deletions");
const { teams } = await import("@/lib/sync/teams");
const { db } = await import("@/lib/db/client");
const { probeReauthorization } = await import("@/lib/installs/reauth");
const { fetchTimeline } = await import("@/lib/admin/timeline");

beforeEach(resetWorld);
afterEach(clearApiFaults);
afterAll(closeSql);

const PER_PAGE = 5;
const NORTHWIND = 1001;
const CHARGE_POINT_PAGES = Math.ceil(23 / PER_PAGE); // 5
const CHARGE_PAGES = Math.ceil(36 / PER_PAGE); // 8
const HOUR_MS = 3_600_000;

type ResourceSummary = { resource: string; outcome: string; reason: string | null; passKind: string | null; resumedAtPage: number | null; pages: number; recordsUpserted: number; recordsDeleted: number; requests: number };
type SyncSummary = { outcome: string; reason: string | null; resources: ResourceSummary[] };

const resourceOf = (summary: SyncSummary, name: string) => summary.resources.find((r) => r.resource === name);

async function sandboxOperator(operatorId: number) {
  const { operators } = await control<{ operators: { id: number; chargePointCount: number; chargeCount: number }[] }>("GET", "/operators");
  const operator = operators.find((o) => o.id === operatorId)!;
  const { data } = await control<{ data: { id: number; siteId: number | null; name: string | null; type: string; location: { address: { city: string } } }[] }>(
    "GET",
    `/operators/${operatorId}/charge-points`,
  );
  return { ...operator, chargePoints: data };
}

async function counts(installRowId: string) {
  const [row] = await sql<{ charge_points: number; charges: number; teams: number; deleted: number }>(
    `SELECT (SELECT count(*)::int FROM synced_charge_points WHERE install_row_id = $1) AS charge_points,
            (SELECT count(*)::int FROM synced_charges WHERE install_row_id = $1) AS charges,
            (SELECT count(*)::int FROM synced_teams WHERE install_row_id = $1) AS teams,
            (SELECT count(*)::int FROM synced_charges WHERE install_row_id = $1 AND deleted_at IS NOT NULL)
              + (SELECT count(*)::int FROM synced_charge_points WHERE install_row_id = $1 AND deleted_at IS NOT NULL) AS deleted`,
    [installRowId],
  );
  return row!;
}

async function checkpoint(installRowId: string, resource: string) {
  const [row] = await sql<{ pass_id: string | null; pass_kind: string | null; next_page: number; high_water_id: string | null }>(
    "SELECT pass_id, pass_kind, next_page, high_water_id FROM sync_checkpoints WHERE install_row_id = $1 AND resource = $2",
    [installRowId, resource],
  );
  return row;
}

/** Every list request the sandbox answered for the install: path → statuses, in order. */
async function listRequests(installId: number, path: "/charges" | "/charge-points") {
  const byPage = new Map<number, (number | null)[]>();
  for (const event of await sandboxEvents("api")) {
    if (event.detail.install_id !== installId) continue;
    const url = new URL(String(event.detail.path), stack.sandboxUrl);
    if (url.pathname !== `/api/v1${path}`) continue;
    const page = Number(url.searchParams.get("page"));
    byPage.set(page, [...(byPage.get(page) ?? []), event.detail.status as number | null]);
  }
  return byPage;
}

const syncInProcess = (installRowId: string, options: { now?: Date } = {}) => syncInstall(installRowId, { perPage: PER_PAGE, ...options }) as Promise<SyncSummary>;
const syncInWorker = async (installRowId: string, extra: string[] = [], env: Record<string, string> = {}) =>
  runAppWorker(["sync", installRowId, String(PER_PAGE), ...extra], env);

describe("the first sync", () => {
  it("stores every charge point and charge of the install's operator, as the sandbox lists them, and records the run", async () => {
    const install = await installViaPortal(NORTHWIND);
    const operator = await sandboxOperator(NORTHWIND);
    const summary = await syncInProcess(install.installRowId);

    expect(summary.outcome).toBe("completed");
    // The test stack's app asks for charge-points:read and charge-transactions:read, not teams.
    expect(resourceOf(summary, "teams")).toMatchObject({ outcome: "skipped", reason: "scope_not_granted", pages: 0, requests: 0 });
    expect(resourceOf(summary, "charge_points")).toMatchObject({ outcome: "completed", passKind: "full", pages: CHARGE_POINT_PAGES, recordsUpserted: 23, requests: CHARGE_POINT_PAGES });
    expect(resourceOf(summary, "charges")).toMatchObject({ outcome: "completed", passKind: "full", pages: CHARGE_PAGES, recordsUpserted: 36, requests: CHARGE_PAGES });
    expect(await counts(install.installRowId)).toEqual({ charge_points: operator.chargePointCount, charges: operator.chargeCount, teams: 0, deleted: 0 });

    // Mapped fields match the service's records; the record is kept whole beside them.
    const sample = operator.chargePoints[7]!;
    const [row] = await sql<{ name: string | null; type: string; city: string; site_id: string | null; raw: Record<string, unknown> }>(
      "SELECT name, type, city, site_id, raw FROM synced_charge_points WHERE install_row_id = $1 AND external_id = $2",
      [install.installRowId, String(sample.id)],
    );
    expect(row).toMatchObject({ name: sample.name, type: sample.type, city: sample.location.address.city, site_id: sample.siteId === null ? null : String(sample.siteId) });
    expect(row!.raw).toEqual(sample);
    const [charge] = await sql<{ currency: string; cost: string; raw: { cost: number } }>(
      "SELECT currency, cost::text, raw FROM synced_charges WHERE install_row_id = $1 ORDER BY external_id LIMIT 1",
      [install.installRowId],
    );
    expect(charge!.currency).toBe("EUR");
    expect(Number(charge!.cost)).toBe(charge!.raw.cost);

    // What the console reads: one row per resource and run.
    const runs = await sql<{ resource: string; outcome: string; error_kind: string | null; pages: number; records_upserted: number; requests: number }>(
      "SELECT resource, outcome, error_kind, pages, records_upserted, requests FROM sync_runs WHERE install_row_id = $1 ORDER BY resource",
      [install.installRowId],
    );
    expect(shipped(runs)).toEqual([
      { resource: "charge_points", outcome: "completed", error_kind: null, pages: CHARGE_POINT_PAGES, records_upserted: 23, requests: CHARGE_POINT_PAGES },
      { resource: "charges", outcome: "completed", error_kind: null, pages: CHARGE_PAGES, records_upserted: 36, requests: CHARGE_PAGES },
      { resource: "teams", outcome: "skipped", error_kind: "scope_not_granted", pages: 0, records_upserted: 0, requests: 0 },
    ]);
  });

  it("syncs teams too when the operator granted a teams scope", async () => {
    await control("POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:read"] });
    const install = await installViaPortal(NORTHWIND);
    const summary = await syncInProcess(install.installRowId);
    expect(resourceOf(summary, "teams")).toMatchObject({ outcome: "completed", passKind: "full", pages: 1, recordsUpserted: 3 });
    const rows = await sql<{ name: string; type: string }>("SELECT name, type FROM synced_teams WHERE install_row_id = $1 ORDER BY external_id", [install.installRowId]);
    expect(rows).toEqual([
      { name: "Northwind Operations", type: "operator" },
      { name: "Harbour Logistics Fleet", type: "professional" },
      { name: "Residents Vondelpark", type: "private" },
    ]);
  });

  it("run again, it is idempotent: no duplicate and no changed row, and charges are read from the last page only (incremental)", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInProcess(install.installRowId);
    const before = await sql("SELECT external_id, updated_at, first_seen_at, deleted_at FROM synced_charges WHERE install_row_id = $1 ORDER BY external_id", [install.installRowId]);

    const again = await syncInProcess(install.installRowId, { now: new Date(Date.now() + HOUR_MS) });
    expect(again.outcome).toBe("completed");
    // The high-water mark was the last record, alone on page 7: one probe of that page, then the page itself.
    expect(resourceOf(again, "charges")).toMatchObject({ passKind: "incremental", pages: 1, recordsUpserted: 1, requests: 2, recordsDeleted: 0 });
    expect(resourceOf(again, "charge_points")).toMatchObject({ passKind: "full", pages: CHARGE_POINT_PAGES, recordsDeleted: 0 });
    expect(await counts(install.installRowId)).toEqual({ charge_points: 23, charges: 36, teams: 0, deleted: 0 });
    const after = await sql("SELECT external_id, updated_at, first_seen_at, deleted_at FROM synced_charges WHERE install_row_id = $1 ORDER BY external_id", [install.installRowId]);
    expect(after).toEqual(before);

    // A day later the pass is a full one again (SYNC_FULL_PASS_INTERVAL_HOURS, 24).
    const dayLater = await syncInProcess(install.installRowId, { now: new Date(Date.now() + 25 * HOUR_MS) });
    expect(resourceOf(dayLater, "charges")).toMatchObject({ passKind: "full", pages: CHARGE_PAGES, recordsUpserted: 36, recordsDeleted: 0 });
    expect(await counts(install.installRowId)).toEqual({ charge_points: 23, charges: 36, teams: 0, deleted: 0 });
  });
});

describe("the run history: what happened, not every quiet run", () => {
  const runsOf = async (installRowId: string) =>
    shipped(await sql<{ resource: string; outcome: string; error_kind: string | null }>("SELECT resource, outcome, error_kind FROM sync_runs WHERE install_row_id = $1 ORDER BY started_at, resource", [installRowId]));
  const daysOf = async (installRowId: string) =>
    shipped(
      await sql<{ resource: string; runs: number; quiet_runs: number; failures: number; records_changed: number }>(
        "SELECT resource, sum(runs)::int AS runs, sum(quiet_runs)::int AS quiet_runs, sum(failures)::int AS failures, sum(records_changed)::int AS records_changed FROM sync_days WHERE install_row_id = $1 GROUP BY resource ORDER BY resource",
        [installRowId],
      ),
    );

  it("a run that changed nothing and ended as the one before writes no sync_runs row but is counted in the day's rollup; a failing and a changing run are kept", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInProcess(install.installRowId);
    const first = [
      { resource: "charge_points", outcome: "completed", error_kind: null },
      { resource: "charges", outcome: "completed", error_kind: null },
      { resource: "teams", outcome: "skipped", error_kind: "scope_not_granted" },
    ];
    expect(await runsOf(install.installRowId)).toEqual(first);

    // Again: every record read back unchanged, teams skipped for the same reason. No row, only counts.
    const quiet = await syncInProcess(install.installRowId, { now: new Date(Date.now() + 60_000) });
    expect(quiet.outcome).toBe("completed");
    expect(await runsOf(install.installRowId)).toEqual(first);
    expect(await daysOf(install.installRowId)).toEqual([
      { resource: "charge_points", runs: 2, quiet_runs: 1, failures: 0, records_changed: 23 },
      { resource: "charges", runs: 2, quiet_runs: 1, failures: 0, records_changed: 36 },
      { resource: "teams", runs: 2, quiet_runs: 1, failures: 0, records_changed: 0 },
    ]);
    // The latest outcome still moved on (the console, the alerts and freshness read it).
    const [latest] = await sql<{ started_at: Date }>("SELECT started_at FROM sync_latest WHERE install_row_id = $1 AND resource = 'charges'", [install.installRowId]);
    expect(latest!.started_at.getTime()).toBeGreaterThan(Date.now());

    // A failing run is kept, and so is the next run that recovers from it.
    await armApiFault({ path: "/charges", mode: "error503", forMs: 60_000, installId: install.installId });
    await syncInProcess(install.installRowId, { now: new Date(Date.now() + 120_000) });
    await clearApiFaults();
    await syncInProcess(install.installRowId, { now: new Date(Date.now() + 180_000) });
    // A changed record is kept (charge points are read whole every run).
    await changeSandboxRecord(NORTHWIND, "charge-points", 10003, { name: "Renamed" });
    await syncInProcess(install.installRowId, { now: new Date(Date.now() + 240_000) });

    expect((await runsOf(install.installRowId)).slice(first.length)).toEqual([
      { resource: "charges", outcome: "failed", error_kind: "unavailable" },
      { resource: "charges", outcome: "completed", error_kind: null },
      { resource: "charge_points", outcome: "completed", error_kind: null },
    ]);
    expect(await daysOf(install.installRowId)).toEqual([
      { resource: "charge_points", runs: 5, quiet_runs: 3, failures: 0, records_changed: 24 },
      { resource: "charges", runs: 5, quiet_runs: 2, failures: 1, records_changed: 36 },
      { resource: "teams", runs: 5, quiet_runs: 4, failures: 0, records_changed: 0 },
    ]);

    // The install's timeline: each kept run on its own line, the quiet ones counted per resource and day.
    const timeline = await fetchTimeline({ id: install.installRowId, installId: install.installId });
    const quietOf = (label: string) =>
      timeline.map((entry) => new RegExp(`^Sync of ${label}: (\\d+) quiet runs?`).exec(entry.title)).reduce((sum, match) => sum + (match ? Number(match[1]) : 0), 0);
    expect([quietOf("charge points"), quietOf("charges"), quietOf("teams")]).toEqual([3, 2, 4]);
    expect(timeline.filter((entry) => entry.kind === "sync" && !entry.key.startsWith("sync-day:")).length).toBe(
      (await sql<{ n: number }>("SELECT count(*)::int AS n FROM sync_runs WHERE install_row_id = $1", [install.installRowId]))[0]!.n,
    );
  }, scaled(60_000));
});

describe("a sync that stops mid-way", () => {
  it("killed (SIGKILL) after 8 pages resumes from its checkpoint, and no finished page of charges is read twice", async () => {
    const install = await installViaPortal(NORTHWIND);
    // 5 pages of charge points, then 3 of charges; the process dies as it is about to ask for the 4th.
    const killed = await syncInWorker(install.installRowId, ["kill-after", String(CHARGE_POINT_PAGES + 3)]);
    expect(killed.signal).toBe("SIGKILL");
    expect(await checkpoint(install.installRowId, "charges")).toMatchObject({ pass_kind: "full", next_page: 3 });
    expect(await counts(install.installRowId)).toMatchObject({ charge_points: 23, charges: 15 });
    // The killed run's row says so: still "running", nobody finished it.
    expect(await sql("SELECT outcome FROM sync_runs WHERE install_row_id = $1 AND resource = 'charges'", [install.installRowId])).toEqual([{ outcome: "running" }]);
    const passBefore = (await checkpoint(install.installRowId, "charges"))!.pass_id;

    const resumed = await syncInProcess(install.installRowId);
    expect(resumed.outcome).toBe("completed");
    expect(resourceOf(resumed, "charges")).toMatchObject({ passKind: "full", resumedAtPage: 3, pages: CHARGE_PAGES - 3, recordsUpserted: 36 - 15, recordsDeleted: 0 });
    expect(await counts(install.installRowId)).toEqual({ charge_points: 23, charges: 36, teams: 0, deleted: 0 });
    // The same pass, finished: its id was kept across the crash.
    expect(await checkpoint(install.installRowId, "charges")).toMatchObject({ pass_id: null, high_water_id: "1000036" });
    expect((await sql<{ pass_id: string }>("SELECT pass_id FROM sync_runs WHERE install_row_id = $1 AND resource = 'charges' AND outcome = 'completed'", [install.installRowId]))[0]!.pass_id).toBe(passBefore);

    // Each page of charges was requested exactly once, across both processes.
    const requests = await listRequests(install.installId, "/charges");
    expect([...requests.keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const statuses of requests.values()) expect(statuses).toEqual([200]);
  }, scaled(60_000));

  it("stopped by its signal, then a 429 storm it cannot wait out: it stops with the checkpoint kept, and resumes at that page", async () => {
    const install = await installViaPortal(NORTHWIND);
    const stopped = resultOf<SyncSummary>(await syncInWorker(install.installRowId, ["stop-after", String(CHARGE_POINT_PAGES + 3)]));
    expect(stopped).toMatchObject({ outcome: "stopped", reason: "stop_requested" });
    expect(resourceOf(stopped, "charges")).toMatchObject({ outcome: "stopped", pages: 3 });
    expect(await checkpoint(install.installRowId, "charges")).toMatchObject({ next_page: 3 });

    // contract §8: the service answers 429 to everything about charges for a while, without saying
    // when to come back. With no retry allowed, the run stops at once; nothing is lost.
    await armApiFault({ path: "/charges", mode: "rate-limited", forMs: 60_000, installId: install.installId, resetsIn: "omit" });
    const limited = resultOf<SyncSummary>(await syncInWorker(install.installRowId, [], { API_MAX_RETRIES: "0" }));
    expect(limited).toMatchObject({ outcome: "stopped", reason: "rate_limited" });
    expect(resourceOf(limited, "charges")).toMatchObject({ outcome: "stopped", reason: "rate_limited", resumedAtPage: 3, pages: 0 });
    expect(await checkpoint(install.installRowId, "charges")).toMatchObject({ next_page: 3 });
    expect(await counts(install.installRowId)).toMatchObject({ charges: 15 });

    // The storm passes: the next run resumes at page 3.
    await clearApiFaults();
    const resumed = await syncInProcess(install.installRowId);
    expect(resourceOf(resumed, "charges")).toMatchObject({ outcome: "completed", resumedAtPage: 3, pages: CHARGE_PAGES - 3 });
    expect(await counts(install.installRowId)).toMatchObject({ charges: 36, deleted: 0 });
    const requests = await listRequests(install.installId, "/charges");
    for (const [page, statuses] of requests) expect(statuses.filter((s) => s === 200), `page ${page}`).toEqual([200]);
    expect(requests.get(3)).toEqual([429, 200]);
  }, scaled(60_000));

  it("a short 429 storm is waited out: the run holds the install's budget, retries, and completes", async () => {
    const install = await installViaPortal(NORTHWIND);
    await armApiFault({ path: "/charges", mode: "rate-limited", forMs: 3_000, installId: install.installId, resetsIn: "send" });
    const summary = await syncInProcess(install.installRowId);
    expect(summary.outcome).toBe("completed");
    expect(await counts(install.installRowId)).toMatchObject({ charges: 36 });
    const page0 = (await listRequests(install.installId, "/charges")).get(0)!;
    expect(page0[0]).toBe(429);
    expect(page0.at(-1)).toBe(200);
  }, scaled(30_000));

  it("inside a cron run's time limit, a page that would wait past the run's end for budget is not sent: the run answers on time, and the service refused nothing", async () => {
    // Two requests a minute: the redirect_uri's /consumers/me spends the budget, and the next
    // background slot is about half a minute away. A background call may wait two minutes
    // (API_BACKGROUND_DEADLINE_MS), but not past the end of the run it belongs to.
    await setDefaultRateLimit({ limit: 2, windowSeconds: 60 });
    const install = await installViaPortal(NORTHWIND);
    const started = performance.now();
    // The first copy's job, queued by the callback, worked as a cron route does with a 3 s limit.
    const run = resultOf<{ worked: number; outcomes: Record<string, number> }>(await runAppWorker(["work", "sync", "1000", "1", "3000"]));
    const elapsedMs = performance.now() - started;
    expect(run).toMatchObject({ worked: 1 });
    expect(Object.keys(run.outcomes)).toEqual([expect.stringMatching(/^stopped:(rate_limited|time_limit)$/)]);
    // Process start included; before, this run waited for the slot (about 30 s).
    expect(elapsedMs).toBeLessThan(15_000);
    expect(shipped(await sql<{ resource: string; outcome: string }>("SELECT resource, outcome FROM sync_runs WHERE install_row_id = $1 ORDER BY started_at", [install.installRowId])).map((r) => r.outcome)).toContain("stopped");
    // What was sent had budget: the service refused nothing.
    const sent = [...(await listRequests(install.installId, "/charge-points")).values()].flat();
    expect(sent.filter((status) => status !== 200)).toEqual([]);
  }, scaled(60_000));

  it("NEEDS_REAUTH stops it and flags the install; after the operator re-consents it resumes the same pass at its page", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInWorker(install.installRowId, ["stop-after", String(CHARGE_POINT_PAGES + 3)]);
    const { pass_id: passId } = (await checkpoint(install.installRowId, "charges"))!;

    await control("POST", `/installs/${install.installId}/flag-reauth`);
    const flagged = await syncInProcess(install.installRowId);
    expect(flagged).toMatchObject({ outcome: "stopped", reason: "needs_reauth" });
    expect((await sql("SELECT status FROM installs WHERE id = $1", [install.installRowId]))[0]).toEqual({ status: "NEEDS_REAUTH" });
    expect(await checkpoint(install.installRowId, "charges")).toMatchObject({ pass_id: passId, next_page: 3 });
    // contract §7: no further call for a flagged install; a run now is skipped before any request.
    const apiCallsBefore = (await sandboxEvents("api")).length;
    expect(await syncInProcess(install.installRowId)).toMatchObject({ outcome: "skipped", reason: "needs_reauth", resources: [] });
    expect((await sandboxEvents("api")).length).toBe(apiCallsBefore);

    // The operator approves at reauth_url; the app's probe sees the API answer again.
    const [row] = await sql<{ reauth_url: string }>("SELECT reauth_url FROM installs WHERE id = $1", [install.installRowId]);
    const approved = await fetch(row!.reauth_url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "decision=approve", redirect: "manual" });
    expect(approved.status).toBe(303);
    expect(await probeReauthorization(install.installRowId, "staff", { force: true })).toBe("cleared");

    const resumed = await syncInProcess(install.installRowId);
    expect(resourceOf(resumed, "charges")).toMatchObject({ outcome: "completed", resumedAtPage: 3, pages: CHARGE_PAGES - 3 });
    expect(await counts(install.installRowId)).toMatchObject({ charges: 36, deleted: 0 });
  }, scaled(60_000));

  it("install.revoked while a page is in flight: the page is not written, the sync stops, and retention removes the data later", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInWorker(install.installRowId, ["stop-after", String(CHARGE_POINT_PAGES + 3)]);
    // The next page of charges is held at the service while the operator uninstalls.
    await armApiFault({ path: "/charges", mode: "latency", latencyMs: 2_000, count: 1, installId: install.installId });
    const running = syncInProcess(install.installRowId);
    await waitFor(async () => (await control<{ held: number }>("GET", "/api-faults")).held === 1);
    await control("POST", `/installs/${install.installId}/revoke`);
    expect((await sql("SELECT status FROM installs WHERE id = $1", [install.installRowId]))[0]).toEqual({ status: "REVOKED" });

    const summary = await running;
    expect(summary).toMatchObject({ outcome: "stopped", reason: "revoked" });
    expect(await counts(install.installRowId)).toMatchObject({ charge_points: 23, charges: 15 });
    expect(await syncInProcess(install.installRowId)).toMatchObject({ outcome: "skipped", reason: "revoked" });

    // Retention (SYNC_RETENTION_DAYS, 30 by default): kept within the period, deleted after it.
    expect(await purgeRevokedInstallData({ now: new Date(Date.now() + 29 * 24 * HOUR_MS) })).toMatchObject({ installs: 0 });
    expect(await counts(install.installRowId)).toMatchObject({ charge_points: 23, charges: 15 });
    const purged = await purgeRevokedInstallData({ now: new Date(Date.now() + 31 * 24 * HOUR_MS), batchRows: 4 });
    expect(purged).toMatchObject({ installs: 1, stoppedEarly: false, deleted: { synced_charges: 15, synced_charge_points: 23, synced_teams: 0, sync_checkpoints: 2 } });
    expect(await counts(install.installRowId)).toEqual({ charge_points: 0, charges: 0, teams: 0, deleted: 0 });
    // What the console shows stays: counts, no operator data.
    expect((await sql("SELECT count(*)::int AS n FROM sync_runs WHERE install_row_id = $1", [install.installRowId]))[0]).not.toEqual({ n: 0 });
  }, scaled(60_000));
});

describe("a list that fails", () => {
  it("a 503 storm on the first list (teams) fails only that list: charge points and charges are copied in the same run, each outcome recorded", async () => {
    await control("POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:read"] });
    const install = await installViaPortal(NORTHWIND);
    // Every teams request answers 503, the app's retries included; the other lists answer.
    await armApiFault({ path: "/teams", mode: "error503", forMs: 60_000, installId: install.installId });
    const summary = (await syncInProcess(install.installRowId)) as SyncSummary & { failures: unknown[] };

    expect(summary).toMatchObject({ outcome: "failed", reason: "teams: unavailable", failures: [{ resource: "teams", reason: "unavailable" }] });
    expect(shipped(summary.resources).map((r) => [r.resource, r.outcome])).toEqual([
      ["teams", "failed"],
      ["charge_points", "completed"],
      ["charges", "completed"],
    ]);
    expect(await counts(install.installRowId)).toMatchObject({ teams: 0, charge_points: 23, charges: 36 });
    const runs = await sql<{ resource: string; outcome: string; error_kind: string | null }>(
      "SELECT resource, outcome, error_kind FROM sync_runs WHERE install_row_id = $1 ORDER BY resource",
      [install.installRowId],
    );
    expect(shipped(runs)).toEqual([
      { resource: "charge_points", outcome: "completed", error_kind: null },
      { resource: "charges", outcome: "completed", error_kind: null },
      { resource: "teams", outcome: "failed", error_kind: "unavailable" },
    ]);
    // For alerting it is a failed run (three in a row raise sync.failing, lib/alerts/incidents.ts).
    expect(await sql("SELECT failures FROM alert_incidents WHERE key = $1", [`sync:${install.installRowId}`])).toEqual([{ failures: 1 }]);

    // The storm passes: the next run copies the teams, and the failures in a row are reset.
    await clearApiFaults();
    expect((await syncInProcess(install.installRowId)).outcome).toBe("completed");
    expect(await counts(install.installRowId)).toMatchObject({ teams: 3 });
    expect(await sql("SELECT failures FROM alert_incidents WHERE key = $1", [`sync:${install.installRowId}`])).toEqual([{ failures: 0 }]);
  }, scaled(60_000));

  it("a failure of the install's token (its refresh unavailable) ends the run at the list that met it: the next would meet it too", async () => {
    const install = await installViaPortal(NORTHWIND);
    await expireAccessToken(install.installRowId, false);
    // The refresh's answer is a 500: its outcome is unknown until it is settled (lib/oauth/refresh.ts).
    await control("POST", "/faults", { tokenEndpoint: { mode: "error500", count: 1 } });
    const summary = await syncInProcess(install.installRowId);
    expect(summary).toMatchObject({ outcome: "failed", reason: "token_refresh_unavailable" });
    expect(summary.resources.map((r) => [r.resource, r.outcome, r.reason])).toEqual([
      ["teams", "skipped", "scope_not_granted"],
      ["charge_points", "failed", "token_refresh_unavailable"],
    ]);
    expect((await tokenCalls(install.installId)).refresh_token).toBe(1);
  }, scaled(60_000));
});

describe("retention", () => {
  it("with SYNC_RETENTION_DAYS=0 deletes an uninstalled operator's data at once, and leaves live installs' data alone", async () => {
    const gone = await installViaPortal(NORTHWIND);
    const live = await installViaPortal(1002);
    await syncInProcess(gone.installRowId);
    await syncInProcess(live.installRowId);
    await control("POST", `/installs/${gone.installId}/revoke`);

    expect(resultOf(await runAppWorker(["purge"], { SYNC_RETENTION_DAYS: "0" }))).toMatchObject({ installs: 1, deleted: { synced_charges: 36, synced_charge_points: 23 } });
    expect(await counts(gone.installRowId)).toEqual({ charge_points: 0, charges: 0, teams: 0, deleted: 0 });
    expect(await counts(live.installRowId)).toEqual({ charge_points: 7, charges: 14, teams: 0, deleted: 0 });
  }, scaled(60_000));
});

describe("deletion detection", () => {
  it("a record no longer listed is marked deleted by the next full pass, and a record listed again is un-deleted", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInProcess(install.installRowId);
    // Records synced by an earlier pass that the list no longer has: one before its first record,
    // one after its last (the sandbox's ids are contiguous, 1000001 to 1000036).
    for (const id of ["999999", "1000099"]) {
      await sql(
        `INSERT INTO synced_charges (install_row_id, external_id, raw, first_seen_at, last_seen_at, updated_at)
         VALUES ($1, $2, '{}', now() - interval '2 days', now() - interval '2 days', now() - interval '2 days')`,
        [install.installRowId, id],
      );
    }
    // And a listed one that an earlier pass had marked.
    await sql("UPDATE synced_charges SET deleted_at = now() - interval '1 day' WHERE install_row_id = $1 AND external_id = '1000020'", [install.installRowId]);

    // An incremental pass proves nothing about deletions: it marks none.
    const incremental = await syncInProcess(install.installRowId, { now: new Date(Date.now() + HOUR_MS) });
    expect(resourceOf(incremental, "charges")).toMatchObject({ passKind: "incremental", recordsDeleted: 0 });

    const full = await syncInProcess(install.installRowId, { now: new Date(Date.now() + 25 * HOUR_MS) });
    expect(resourceOf(full, "charges")).toMatchObject({ passKind: "full", recordsDeleted: 2 });
    const marked = await sql<{ external_id: string }>(
      "SELECT external_id FROM synced_charges WHERE install_row_id = $1 AND deleted_at IS NOT NULL ORDER BY external_id",
      [install.installRowId],
    );
    expect(marked.map((r) => r.external_id)).toEqual(["1000099", "999999"]);
    expect(await counts(install.installRowId)).toMatchObject({ charges: 38 });
  });

  it("marks only what one page proves gone: a record between two pages may have slipped (a shift), and is left for the next pass", async () => {
    const install = await installViaPortal(NORTHWIND);
    const passId = "00000000-0000-4000-8000-000000000001";
    // A pass saw 101 and 102 on page 0, 104 and 106 on page 1; 103 sits between the pages, 105 inside page 1.
    const rows: [string, number | null][] = [["101", 0], ["102", 0], ["103", null], ["104", 1], ["105", null], ["106", 1]];
    for (const [id, page] of rows) {
      await sql(
        `INSERT INTO synced_teams (install_row_id, external_id, raw, seen_pass_id, seen_page, first_seen_at, last_seen_at, updated_at)
         VALUES ($1, $2, '{}', $3, $4, now(), now(), now())`,
        [install.installRowId, id, page === null ? null : passId, page],
      );
    }
    const deleted = await markUnlistedDeleted(db(), teams as never, { installRowId: install.installRowId, passId, endPage: null, listWasEmpty: false, now: new Date() });
    expect(deleted).toBe(1);
    expect(await sql("SELECT external_id FROM synced_teams WHERE install_row_id = $1 AND deleted_at IS NOT NULL", [install.installRowId])).toEqual([{ external_id: "105" }]);
    // Past the last record seen: proved only when that record's page ended the list.
    await sql("INSERT INTO synced_teams (install_row_id, external_id, raw, first_seen_at, last_seen_at, updated_at) VALUES ($1, '107', '{}', now(), now(), now())", [install.installRowId]);
    expect(await markUnlistedDeleted(db(), teams as never, { installRowId: install.installRowId, passId, endPage: null, listWasEmpty: false, now: new Date() })).toBe(0);
    expect(await markUnlistedDeleted(db(), teams as never, { installRowId: install.installRowId, passId, endPage: 1, listWasEmpty: false, now: new Date() })).toBe(1);
  });
});

describe("records the service may send oddly", () => {
  it("maps a malformed field to null instead of failing the page, never keys a record without an id, and stores text verbatim", async () => {
    const { charges } = await import("@/lib/sync/charges");
    expect(charges.toRow({ cost: 1 })).toBeNull();
    expect(charges.toRow({ id: "" })).toBeNull();
    const odd = charges.toRow({ id: 7, startedAt: "not a date", stoppedAt: 12, cost: "12.50", consumedKwh: Number.NaN, currency: { identifier: "EUR", decimals: 2.5 } })!;
    expect(odd).toMatchObject({ external_id: "7", started_at: null, stopped_at: null, cost: null, consumed_kwh: null, currency: "EUR", currency_decimals: null });

    const install = await installViaPortal(NORTHWIND);
    const name = `'); DROP TABLE synced_teams; -- "quoted" \\ ${"é".repeat(3)}`;
    const written = await db().$transaction((tx) =>
      teams.upsert(tx, [teams.toRow({ id: 1, name, type: "operator" })!, teams.toRow({ id: 2, name: null })!], {
        installRowId: install.installRowId,
        passId: "00000000-0000-4000-8000-000000000002",
        page: 0,
        now: new Date(),
      }),
    );
    expect(written).toBe(2);
    expect(await sql("SELECT external_id, name FROM synced_teams WHERE install_row_id = $1 ORDER BY external_id", [install.installRowId])).toEqual([
      { external_id: "1", name },
      { external_id: "2", name: null },
    ]);
  });
});

describe("incremental passes", () => {
  it("read from the page holding the highest id synced to the end, and look a page earlier while that page starts past it", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInProcess(install.installRowId);
    // Play "six new charges since the last pass": the copy ends at 1000030, the 30th record (position 29, page 5).
    await sql("DELETE FROM synced_charges WHERE install_row_id = $1 AND external_id > '1000030'", [install.installRowId]);
    await sql("UPDATE sync_checkpoints SET high_water_id = '1000030', high_water_position = 29 WHERE install_row_id = $1 AND resource = 'charges'", [install.installRowId]);
    const caughtUp = await syncInProcess(install.installRowId, { now: new Date(Date.now() + HOUR_MS) });
    expect(resourceOf(caughtUp, "charges")).toMatchObject({ passKind: "incremental", pages: 3, requests: 4 });
    expect(await counts(install.installRowId)).toMatchObject({ charges: 36 });

    // Records before the mark were deleted meanwhile (its position moved up): the recorded position
    // (35, page 7) now starts past 1000020, so the pass looks back until a page starts at or before it.
    await sql("UPDATE sync_checkpoints SET high_water_id = '1000020', high_water_position = 35 WHERE install_row_id = $1 AND resource = 'charges'", [install.installRowId]);
    const lookedBack = await syncInProcess(install.installRowId, { now: new Date(Date.now() + 2 * HOUR_MS) });
    // Probes of pages 7, 6, 5, 4 (which starts at 1000021) and 3 (1000016); then pages 3 to 7.
    expect(resourceOf(lookedBack, "charges")).toMatchObject({ passKind: "incremental", pages: 5, requests: 10 });
  });

  it("start earlier for a charge still open that started within the lookback, and read it again until it stops", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInProcess(install.installRowId);
    // The 12th charge (position 11, page 2) as the copy saw it while it was still charging, an hour ago.
    const [stopped] = await sql<{ external_id: string; stopped_at: Date }>(
      "SELECT external_id, stopped_at FROM synced_charges WHERE install_row_id = $1 AND external_id = '1000012'",
      [install.installRowId],
    );
    expect(stopped!.stopped_at).not.toBeNull(); // at the service it has stopped since
    await sql("UPDATE synced_charges SET stopped_at = NULL, started_at = now() - interval '1 hour' WHERE install_row_id = $1 AND external_id = '1000012'", [
      install.installRowId,
    ]);
    const reread = await syncInProcess(install.installRowId, { now: new Date(Date.now() + HOUR_MS) });
    // One probe of page 2 (its first record, 1000011, is before the open charge), then pages 2 to 7.
    expect(resourceOf(reread, "charges")).toMatchObject({ passKind: "incremental", pages: 6, requests: 7 });
    const [after] = await sql<{ stopped_at: Date }>("SELECT stopped_at FROM synced_charges WHERE install_row_id = $1 AND external_id = '1000012'", [install.installRowId]);
    expect(after!.stopped_at).toEqual(stopped!.stopped_at);

    // Stopped now: the next incremental pass reads the last page only again.
    expect(resourceOf(await syncInProcess(install.installRowId, { now: new Date(Date.now() + 2 * HOUR_MS) }), "charges")).toMatchObject({ passKind: "incremental", pages: 1 });
  });
});

describe("the install's state and configuration", () => {
  it("siteIds keeps only those sites' charge points and charges; syncCharges false removes the charges and stops syncing them", async () => {
    const install = await installViaPortal(NORTHWIND);
    await syncInProcess(install.installRowId);
    const operator = await sandboxOperator(NORTHWIND);
    const siteId = operator.chargePoints.find((cp) => cp.siteId !== null)!.siteId!;
    const chargesAtSite = (await sql<{ n: number }>("SELECT count(*)::int AS n FROM synced_charges WHERE install_row_id = $1 AND site_id = $2", [install.installRowId, String(siteId)]))[0]!.n;

    await control("POST", `/installs/${install.installId}/config`, { siteIds: [siteId] });
    await syncInProcess(install.installRowId, { now: new Date(Date.now() + 25 * HOUR_MS) });
    const points = await sql<{ site_id: string }>("SELECT DISTINCT site_id FROM synced_charge_points WHERE install_row_id = $1", [install.installRowId]);
    expect(points).toEqual([{ site_id: String(siteId) }]);
    expect(await counts(install.installRowId)).toEqual({
      charge_points: operator.chargePoints.filter((cp) => cp.siteId === siteId).length,
      charges: chargesAtSite,
      teams: 0,
      deleted: 0,
    });

    // install.config.updated deliveries are ordered by their signed delivered_at, in whole seconds.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await control("POST", `/installs/${install.installId}/config`, { siteIds: [], syncCharges: false });
    const chargeRequestsBefore = [...(await listRequests(install.installId, "/charges")).values()].flat().length;
    const summary = await syncInProcess(install.installRowId, { now: new Date(Date.now() + 26 * HOUR_MS) });
    expect(resourceOf(summary, "charges")).toMatchObject({ outcome: "skipped", reason: "disabled_by_config", requests: 0 });
    expect(await counts(install.installRowId)).toEqual({ charge_points: 23, charges: 0, teams: 0, deleted: 0 });
    expect([...(await listRequests(install.installId, "/charges")).values()].flat().length).toBe(chargeRequestsBefore);
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
