// The sync against records that really change at the service: the sandbox's record edits and live
// data (sandbox/README.md decisions 40-44; tests/helpers/stack.ts). Deletions the list proves, a
// deletion that shifts a checkpointed pass's pages (the record that slips between two pages must not
// be reported deleted), changes picked up, and new charges found by an incremental pass.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { liveChargeCount } from "../../sandbox/live";
import { resultOf, runAppWorker } from "../helpers/app-process";
import {
  changeSandboxRecord,
  closeSql,
  control,
  deleteSandboxRecord,
  installViaPortal,
  operatorRecords,
  resetWorld,
  restoreSandboxRecord,
  setLiveData,
  sql,
} from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

const { syncInstall } = await import("@/lib/sync");

beforeEach(resetWorld);
afterAll(closeSql);

const PER_PAGE = 5;
const NORTHWIND = 1001;
const HOUR_MS = 3_600_000;
type ResourceSummary = { resource: string; outcome: string; passKind: string | null; resumedAtPage: number | null; pages: number; recordsUpserted: number; recordsDeleted: number };
type SyncSummary = { outcome: string; resources: ResourceSummary[] };
const charges = (summary: SyncSummary) => summary.resources.find((r) => r.resource === "charges")!;
const sync = (installRowId: string, hoursLater = 0) => syncInstall(installRowId, { perPage: PER_PAGE, now: new Date(Date.now() + hoursLater * HOUR_MS) }) as Promise<SyncSummary>;
const deletedIds = async (installRowId: string, table = "synced_charges") =>
  (await sql<{ external_id: string }>(`SELECT external_id FROM ${table} WHERE install_row_id = $1 AND deleted_at IS NOT NULL ORDER BY external_id`, [installRowId])).map((r) => r.external_id);

describe("records that change at the service", () => {
  it("a charge deleted at the service is marked by the next full pass, and un-deleted when it is listed again", async () => {
    const install = await installViaPortal(NORTHWIND);
    await sync(install.installRowId);
    await deleteSandboxRecord(NORTHWIND, "charges", 1000018);
    await deleteSandboxRecord(NORTHWIND, "charge-points", 10007);

    const full = await sync(install.installRowId, 25);
    expect(charges(full)).toMatchObject({ passKind: "full", recordsDeleted: 1 });
    expect(await deletedIds(install.installRowId)).toEqual(["1000018"]);
    expect(await deletedIds(install.installRowId, "synced_charge_points")).toEqual(["10007"]);
    // Marked, not forgotten: the row and its data stay.
    expect((await sql("SELECT count(*)::int AS n FROM synced_charges WHERE install_row_id = $1", [install.installRowId]))[0]).toEqual({ n: 36 });

    await restoreSandboxRecord(NORTHWIND, "charges", 1000018);
    await sync(install.installRowId, 50);
    expect(await deletedIds(install.installRowId)).toEqual([]);
  });

  it("a deletion while a pass waits at its checkpoint shifts the pages: the record that slips past is not reported deleted", async () => {
    const install = await installViaPortal(NORTHWIND);
    // The pass stops after charges pages 0-2 (1000001 to 1000015), 5 pages of charge points first.
    const stopped = resultOf<SyncSummary>(await runAppWorker(["sync", install.installRowId, String(PER_PAGE), "stop-after", "8"]));
    expect(charges(stopped)).toMatchObject({ outcome: "stopped", pages: 3 });
    // A charge on a page already read goes: every later record moves one place up, and 1000016
    // (first of page 3) slips onto page 2, which the pass has read already.
    await deleteSandboxRecord(NORTHWIND, "charges", 1000005);

    const resumed = await sync(install.installRowId);
    expect(charges(resumed)).toMatchObject({ outcome: "completed", resumedAtPage: 3, recordsDeleted: 0 });
    // 1000016 was never seen by this pass, yet it is live: it is not marked. 1000005 cannot be proved
    // gone by this pass either (it sat between two pages).
    expect(await deletedIds(install.installRowId)).toEqual([]);

    // The next full pass sees 1000016, and proves 1000005 gone (its neighbours now share a page).
    const next = await sync(install.installRowId, 25);
    expect(charges(next)).toMatchObject({ passKind: "full", recordsDeleted: 1 });
    expect(await deletedIds(install.installRowId)).toEqual(["1000005"]);
  }, scaled(60_000));

  it("a change to a listed record is picked up: its mapped fields and updated_at move, others' do not", async () => {
    const install = await installViaPortal(NORTHWIND);
    await sync(install.installRowId);
    const before = await sql<{ external_id: string; updated_at: Date }>("SELECT external_id, updated_at FROM synced_charge_points WHERE install_row_id = $1 ORDER BY external_id", [install.installRowId]);
    await changeSandboxRecord(NORTHWIND, "charge-points", 10003, { name: "Renamed", state: "maintenance" });

    await sync(install.installRowId, 1);
    const [changed] = await sql<{ name: string; state: string; raw: { name: string } }>("SELECT name, state, raw FROM synced_charge_points WHERE install_row_id = $1 AND external_id = '10003'", [install.installRowId]);
    expect(changed).toMatchObject({ name: "Renamed", state: "maintenance", raw: { name: "Renamed" } });
    const after = await sql<{ external_id: string; updated_at: Date }>("SELECT external_id, updated_at FROM synced_charge_points WHERE install_row_id = $1 ORDER BY external_id", [install.installRowId]);
    const moved = after.filter((row, i) => row.updated_at.getTime() !== before[i]!.updated_at.getTime()).map((row) => row.external_id);
    expect(moved).toEqual(["10003"]);
  });

  it("new charges appearing with the clock are found by an incremental pass that reads only the tail", async () => {
    const install = await installViaPortal(NORTHWIND);
    const live = await setLiveData({ enabled: true, chargesPerHour: 4 });
    await sync(install.installRowId);
    const listed = (await operatorRecords(NORTHWIND, "charges")).total;
    expect((await sql("SELECT count(*)::int AS n FROM synced_charges WHERE install_row_id = $1", [install.installRowId]))[0]).toEqual({ n: listed });

    await control("POST", "/clock/advance", { seconds: 3 * 3600 });
    const now = await operatorRecords(NORTHWIND, "charges");
    // Three hours of live charges, as many as the day's shape gives those hours (sandbox decision 59).
    const added = liveChargeCount(NORTHWIND, { enabled: true, chargesPerHour: 4, anchorMs: Date.parse(live.anchor) }, 3);
    expect(added).toBeGreaterThan(0);
    expect(now.total).toBe(listed + added);
    const incremental = await sync(install.installRowId, 1);
    expect(charges(incremental)).toMatchObject({ passKind: "incremental" });
    // One record a page: the page it stopped at, then one per new charge; never the whole list. (How
    // many are new depends on the hours of the day the clock crossed, so the bound is counted from them.)
    expect(charges(incremental).pages).toBeLessThanOrEqual(added + 1);
    expect(charges(incremental).pages).toBeLessThan(now.total);
    const ids = (await sql<{ external_id: string }>("SELECT external_id FROM synced_charges WHERE install_row_id = $1", [install.installRowId])).map((r) => r.external_id);
    expect(new Set(ids)).toEqual(new Set(now.data.map((c) => String(c.id))));
  });
});
