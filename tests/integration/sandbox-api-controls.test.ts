// The stack's sandbox takes issue 11's control calls through the typed helpers of tests/helpers/stack.ts
// (sandbox/README.md decisions 36-38): per-install budgets, faults on API routes, and request counters that see
// the app's own calls. The app's behaviour under budgets and faults is proven elsewhere; this proves the devices
// those tests stand on, against the sandbox process `npm test` starts.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import {
  apiFaults,
  apiRequestCounts,
  armApiFault,
  clearApiFaults,
  clearApiRequestCounts,
  clearRateLimit,
  closeSql,
  installViaPortal,
  rateLimitOf,
  resetWorld,
  setDefaultRateLimit,
  setRateLimit,
  stack,
} from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

/** The operator's dashboard: it reads charge points and charges from the API. */
async function visitDashboard(sessionCookie: string): Promise<void> {
  const response = await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: sessionCookie } });
  expect(response.status).toBe(200);
  await response.text();
}

describe("the sandbox's API controls, through the stack helpers", () => {
  it("count the app's own API calls per install, and start again from zero on request", async () => {
    const install = await installViaPortal(1001);
    const atInstall = await apiRequestCounts(install.installId);
    expect(atInstall.byStatus["200"]).toBeGreaterThanOrEqual(1); // the callback asked GET /consumers/me

    await visitDashboard(install.sessionCookie);
    const afterVisit = await apiRequestCounts(install.installId);
    expect(afterVisit.total).toBeGreaterThan(atInstall.total);
    expect(afterVisit.peakWindowSeconds).toBe(60);
    expect(afterVisit.peakInAnyWindow).toBe(afterVisit.total); // all within the last minute
    expect(afterVisit.windows.reduce((sum, w) => sum + w.count, 0)).toBe(afterVisit.total);

    await clearApiRequestCounts(install.installId);
    expect(await apiRequestCounts(install.installId)).toMatchObject({ total: 0, byStatus: {}, windows: [] });
  });

  it("set budgets per install and arm a fault for one install only; the other is untouched", async () => {
    const a = await installViaPortal(1001);
    const b = await installViaPortal(1002);
    await setDefaultRateLimit({ limit: 500, windowSeconds: 30 });
    expect(await setRateLimit(a.installId, { limit: 50, windowSeconds: 10 })).toMatchObject({ installId: a.installId, source: "install", limit: 50, windowSeconds: 10 });
    expect(await rateLimitOf(b.installId)).toMatchObject({ source: "default", limit: 500, windowSeconds: 30 });

    const armed = await armApiFault({ path: "/charge-points", mode: "error503", forMs: 60_000, installId: a.installId });
    expect(await apiFaults()).toEqual({ faults: [armed], held: 0 });
    await visitDashboard(a.sessionCookie);
    await visitDashboard(b.sessionCookie);
    const countsA = await apiRequestCounts(a.installId);
    expect(countsA.faulted).toBeGreaterThanOrEqual(1);
    expect(countsA.byStatus["503"]).toBe(countsA.faulted);
    expect((await apiRequestCounts(b.installId)).faulted).toBe(0);

    await clearApiFaults();
    expect((await apiFaults()).faults).toEqual([]);
    expect(await clearRateLimit(a.installId)).toMatchObject({ source: "default", limit: 500, windowSeconds: 30 });
  });
});
