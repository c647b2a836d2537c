// The operator's dashboard tells the truth and keeps it current, in Chromium: the first copy appears
// without a reload (the page refreshes itself while the copy runs), the Revenue headline never prints
// a zero that is not one, and while re-authorization is pending every data page shows the local copy,
// read-only, with the date it stopped (the optional sections, Teams and Energy, prove their paused
// state in their own folders' tests). Screenshots are attached to the test's results.
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { approveInPortal, operators, requiredEnv } from "../helpers/e2e";
import { closeSql, control, resetWorld, sql, stack } from "../helpers/stack";
import { SESSIONS_PAGE } from "../helpers/dashboard";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

const NORTHWIND = 1001; // EUR sessions (sandbox/seed.ts)

async function attachScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(name);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}

/** One run of the sync, as a platform scheduler starts it (app/api/cron/[job]). */
async function runSync(): Promise<void> {
  const response = await fetch(`${stack.appUrl}/api/cron/sync`, { method: "POST", headers: { Authorization: `Bearer ${requiredEnv("CRON_SECRET")}` } });
  expect(response.status).toBe(200);
}

async function installNorthwind(page: Page): Promise<number> {
  const operator = (await operators()).find((o) => o.id === NORTHWIND)!;
  await approveInPortal(page, operator);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  return (await control<{ installs: { install_id: number }[] }>("GET", "/installs")).installs[0]!.install_id;
}

test("the first copy appears without a reload", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await installNorthwind(page);
  await expect(page.getByTestId("overview-copying")).toBeVisible();
  await expect(page.getByTestId("copy-progress")).toContainText("0 charge points and 0 sessions copied so far");
  await expect(page.getByTestId("refresh-while-copying")).toBeVisible();
  await attachScreenshot(page, testInfo, "first-copy-under-way.png");
  // A mark on this very document: a reload or a navigation would lose it.
  await page.evaluate(() => {
    (window as unknown as { stillTheSamePage: boolean }).stillTheSamePage = true;
  });

  await runSync();
  // The page asks for itself again every few seconds while the copy runs: the figures arrive on their own.
  await expect(page.getByTestId("headline-sessions-value")).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId("headline-charge-points-value")).toHaveText("23");
  await expect(page.getByTestId("refresh-while-copying")).toHaveCount(0); // complete: it stopped
  expect(await page.evaluate(() => (window as unknown as { stillTheSamePage?: boolean }).stillTheSamePage)).toBe(true);
  await attachScreenshot(page, testInfo, "first-copy-arrived.png");
});

test("the Revenue headline with no session in the reporting currency says what was taken, and that none is in it", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const installId = await installNorthwind(page);
  await control("POST", `/installs/${installId}/config`, { currency: "NOK" });
  await runSync();
  await page.goto("/dashboard?from=2025-01-01&to=2025-12-31");
  const value = page.getByTestId("headline-revenue-value");
  await expect(value).toContainText("€");
  await expect(value).not.toContainText("NOK");
  await expect(page.getByTestId("headline-revenue-detail")).toHaveText("none in NOK, your reporting currency");
  await expect(page.getByTestId("revenue-note")).toContainText("not in your reporting currency NOK");
  await attachScreenshot(page, testInfo, "revenue-none-in-reporting-currency.png");
});

test("while re-authorization is pending, the data pages show the copy read-only, with the date it stopped", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const installId = await installNorthwind(page);
  await runSync();
  // The app owner widens the scopes; the install check meets NEEDS_REAUTH and flags the install.
  await control("POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:write"] });
  await sql("UPDATE installs SET last_reconciled_at = NULL WHERE install_id = $1", [installId]);
  await fetch(`${stack.appUrl}/api/cron/reconcile`, { method: "POST", headers: { Authorization: `Bearer ${requiredEnv("CRON_SECRET")}` } });
  expect((await sql<{ status: string }>("SELECT status FROM installs WHERE install_id = $1", [installId]))[0]!.status).toBe("NEEDS_REAUTH");

  const sessions = SESSIONS_PAGE; // while the dashboard has a Sessions section
  for (const [path, shows, shot] of [
    ["/dashboard?from=2025-01-01&to=2025-12-31", "headline-sessions-value", "reauth-pending-overview.png"],
    ["/dashboard/charge-points", "charge-points", "reauth-pending-charge-points.png"],
    ...(sessions ? [[sessions, "sessions", "reauth-pending-sessions.png"] as const] : []),
  ] as const) {
    await page.goto(path);
    await expect(page.getByTestId("reauth-banner")).toBeVisible();
    await expect(page.getByTestId("read-only-notice")).toContainText("read-only: not updated since");
    await expect(page.getByTestId(shows).first()).toBeVisible();
    await attachScreenshot(page, testInfo, shot);
  }
  await expect(page.getByTestId("install-status")).toHaveText("Re-authorization needed");
});
