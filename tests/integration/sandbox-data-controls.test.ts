// The stack's sandbox takes issue 12's control calls through the typed helpers of tests/helpers/stack.ts
// (sandbox/README.md decisions 40-44): bulk installs whose tokens the partner API accepts, the large operator, record
// edits the app's own reads see, live data (off in the test stack until switched on), and the store's byte counts.
// The app's sync is proven elsewhere; this proves the devices its tests stand on, against the sandbox `npm test` starts.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { liveChargeCount } from "../../sandbox/live";
import {
  LARGE_OPERATOR_ID,
  bulkInstalls,
  changeSandboxRecord,
  closeSql,
  control,
  deleteSandboxRecord,
  installViaPortal,
  liveData,
  operatorRecords,
  resetWorld,
  restoreSandboxRecord,
  sandboxPersistence,
  setLiveData,
  stack,
} from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

async function dashboardHtml(sessionCookie: string): Promise<string> {
  const response = await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: sessionCookie } });
  expect(response.status).toBe(200);
  return response.text();
}

describe("the sandbox's data controls, through the stack helpers", () => {
  it("bulk installs: 2,000 operators with tokens the partner API accepts, each writing only what changed", async () => {
    const installs = await bulkInstalls({ count: 2000, charges: 3 });
    expect(installs).toHaveLength(2000);
    const before = await sandboxPersistence();
    const last = installs.at(-1)!;
    const me = await fetch(`${stack.sandboxUrl}/api/v1/consumers/me`, { headers: { Authorization: `Bearer ${last.access_token}` } });
    expect(await me.json()).toMatchObject({ operatorId: last.operatorId, installId: last.installId });
    const charges = await fetch(`${stack.sandboxUrl}/api/v1/charges`, { headers: { Authorization: `Bearer ${last.access_token}` } });
    expect(((await charges.json()) as { meta: { totalItemCount: number } }).meta.totalItemCount).toBe(3);
    const after = await sandboxPersistence();
    expect(after.compactions).toBe(before.compactions);
    expect(after.bytesWritten - before.bytesWritten).toBeLessThan(4096);
  });

  it("record edits: the app's dashboard stops showing a deleted charge point and shows a renamed one", async () => {
    const install = await installViaPortal(1002);
    const { data: points } = await operatorRecords<{ id: number; name: string | null }>(1002, "charge-points");
    const [gone, renamed] = points.filter((cp) => cp.name !== null);
    expect(await dashboardHtml(install.sessionCookie)).toContain(gone!.name);

    await deleteSandboxRecord(1002, "charge-points", gone!.id);
    await changeSandboxRecord(1002, "charge-points", renamed!.id, { name: "Bryggen Renamed HPC" });
    const html = await dashboardHtml(install.sessionCookie);
    expect(html).not.toContain(`>${gone!.name}<`);
    expect(html).toContain("Bryggen Renamed HPC");
    expect((await operatorRecords(1002, "charge-points")).total).toBe(points.length - 1);

    await restoreSandboxRecord(1002, "charge-points", gone!.id);
    expect((await operatorRecords(1002, "charge-points")).total).toBe(points.length);
  });

  it("live data is off in the test stack; switched on, every simulated hour brings new charges; resetWorld switches it off", async () => {
    expect(await liveData()).toMatchObject({ enabled: false, configured: { enabled: false } });
    await control("POST", "/clock/advance", { seconds: 5 * 3600 });
    expect((await operatorRecords(1001, "charges")).total).toBe(36);

    const live = await setLiveData({ enabled: true, chargesPerHour: 5 });
    await control("POST", "/clock/advance", { seconds: 3 * 3600 + 60 });
    expect(await liveData()).toMatchObject({ enabled: true, slotsElapsed: 3 });
    // As many as the day's shape gives those three hours (sandbox decision 59), for each operator.
    const setting = { enabled: true, chargesPerHour: 5, anchorMs: Date.parse(live.anchor) };
    expect((await operatorRecords(1001, "charges")).total).toBe(36 + liveChargeCount(1001, setting, 3));
    expect((await operatorRecords(LARGE_OPERATOR_ID, "charges")).total).toBe(20_000 + liveChargeCount(LARGE_OPERATOR_ID, setting, 3));

    await resetWorld();
    expect(await liveData()).toMatchObject({ enabled: false });
    expect((await operatorRecords(1001, "charges")).total).toBe(36);
  });
});
