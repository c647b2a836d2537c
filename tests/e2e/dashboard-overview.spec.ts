// The Overview as an operator sees it, in Chromium, at a desktop and a phone width: after a sync of
// Northwind's data, the headline figures, the charts and the state list are visible, the range
// links and the date form put the range in the URL, and the page never scrolls sideways.
// Screenshots are attached to the test's results.
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { WIDTHS, approveInPortal, expectAccessible, operators, requiredEnv } from "../helpers/e2e";
import { closeSql, control, resetWorld, sql, stack } from "../helpers/stack";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

const NORTHWIND = 1001;

async function installAndSync(page: Page, testInfo: TestInfo): Promise<void> {
  const operator = (await operators()).find((o) => o.id === NORTHWIND)!;
  await approveInPortal(page, operator);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  // No worker runs in the test stack: before a sync the Overview says the copy is being made.
  await expect(page.getByTestId("overview-copying")).toBeVisible();
  await attachScreenshot(page, testInfo, "overview-before-sync-1280.png");
  // One run of the sync, as a platform scheduler starts it (/api/cron/sync, app/api/cron/[job]): in the app's own process.
  const response = await fetch(`${stack.appUrl}/api/cron/sync`, { method: "POST", headers: { Authorization: `Bearer ${requiredEnv("CRON_SECRET")}` } });
  expect(response.status).toBe(200);
  const [copied] = await sql<{ n: number }>("SELECT count(*)::int AS n FROM synced_charges");
  expect(copied!.n).toBe(36);
}

async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

/** A full-page screenshot in the test's output folder, attached to its results. */
async function attachScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  await expectAccessible(page, name, [page.viewportSize()!]);
  const file = testInfo.outputPath(name);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}

test("the overview of a synced operator, at desktop and phone widths", async ({ page }, testInfo) => {
  // The charts draw in the browser under the app's Content-Security-Policy (lib/http/security-headers.ts): nothing refused.
  const refused: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/.test(message.text())) refused.push(message.text());
  });
  await page.setViewportSize({ width: 1280, height: 800 });
  await installAndSync(page, testInfo);

  for (const { width, height } of WIDTHS) {
    await page.setViewportSize({ width, height });
    await page.goto("/dashboard?from=2025-01-01&to=2025-12-31");
    await expect(page.getByTestId("headline-sessions-value")).toHaveText("36");
    await expect(page.getByTestId("headline-charge-points-value")).toHaveText("23");
    await expect(page.getByTestId("headline-revenue-value")).toContainText("€");
    // Two daily charts and the states chart, drawn (Recharts renders SVG once it has measured its box).
    for (const tile of ["tile-energy", "tile-sessions", "tile-states"]) {
      await expect(page.getByTestId(tile).locator("svg.recharts-surface")).toBeVisible();
      await expect(page.getByTestId(tile).locator("svg .recharts-bar-rectangle").first()).toBeVisible();
    }
    // States in words, never the service's codes.
    await expect(page.getByTestId("state-list")).toContainText("Available");
    await expect(page.getByTestId("state-list")).not.toContainText("busy-");
    // Each legend dot has its bar's colour, in the same order, and no two states share one.
    const colours = await page.getByTestId("tile-states").evaluate((tile) => {
      const rgb = (value: string) => {
        const probe = document.createElement("span");
        probe.style.color = value;
        document.body.append(probe);
        const computed = getComputedStyle(probe).color;
        probe.remove();
        return computed;
      };
      return {
        bars: [...tile.querySelectorAll("svg .recharts-bar-rectangle path")].map((bar) => rgb(bar.getAttribute("fill") ?? "")),
        dots: [...tile.querySelectorAll('[data-testid="state-list"] li span[aria-hidden="true"]')].map((dot) => getComputedStyle(dot).backgroundColor),
      };
    });
    expect(colours.dots.length).toBeGreaterThan(1);
    expect(colours.dots).toEqual(colours.bars);
    expect(new Set(colours.dots).size).toBe(colours.dots.length);
    await expect(page.getByTestId("overview-as-of")).toContainText("as of");
    await expectNoSidewaysScroll(page);
    await attachScreenshot(page, testInfo, `overview-${width}.png`);
  }

  // The range is in the URL: a preset link, then the date form.
  await page.getByRole("link", { name: "7 days" }).click();
  await expect(page).toHaveURL(/\/dashboard\?days=7$/);
  await expect(page.getByTestId("overview-range")).toContainText("7 days up to");
  await page.getByLabel("From", { exact: true }).fill("2025-02-01");
  await page.getByLabel("To", { exact: true }).fill("2025-02-28");
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/\/dashboard\?from=2025-02-01&to=2025-02-28$/);
  await expect(page.getByTestId("overview-range")).toHaveText("1 Feb 2025 to 28 Feb 2025: 28 days (UTC)");
  await expectNoSidewaysScroll(page);
  expect(refused).toEqual([]);
});

test("an operator who did not share their sessions: every page says so, and none waits for them", async ({ page }, testInfo) => {
  // The app asks for charge points only (a fork that dropped charge-transactions:read), so the
  // operator's consent grants no sessions; the sync skips them (scope_not_granted).
  await control("POST", "/app/scopes", { scopes: ["charge-points:read"] });
  const operator = (await operators()).find((o) => o.id === NORTHWIND)!;
  await approveInPortal(page, operator);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  const response = await fetch(`${stack.appUrl}/api/cron/sync`, { method: "POST", headers: { Authorization: `Bearer ${requiredEnv("CRON_SECRET")}` } });
  expect(response.status).toBe(200);

  // Every router.refresh() of a polling page is an RSC request that is not a link's prefetch.
  const refreshes: string[] = [];
  page.on("request", (request) => {
    const headers = request.headers();
    if (headers["rsc"] !== undefined && headers["next-router-prefetch"] === undefined) refreshes.push(request.url());
  });
  for (const { width, height } of WIDTHS) {
    await page.setViewportSize({ width, height });
    await page.goto("/dashboard?from=2025-01-01&to=2025-12-31");
    await expect(page.getByTestId("headline-charge-points-value")).toHaveText("23");
    for (const headline of ["sessions", "energy", "revenue"]) await expect(page.getByTestId(`headline-${headline}-value`)).toHaveText("Not shared");
    await expect(page.getByTestId("tile-sessions")).toContainText("You did not share your charging sessions with this app");
    await expect(page.getByTestId("refresh-while-copying")).toHaveCount(0);
    await expect(page.getByTestId("overview-as-of")).not.toContainText("Sessions");
    await attachScreenshot(page, testInfo, `overview-sessions-not-shared-${width}.png`);
  }
  // Longer than two of RefreshWhileCopying's quick intervals (3 s): a polling page would have asked by now.
  refreshes.length = 0;
  await page.waitForTimeout(7_000);
  expect(refreshes).toEqual([]);

  // A charge point's page offers no sessions, and Settings says the chosen import has nothing to import.
  const [point] = await sql<{ external_id: string }>("SELECT external_id FROM synced_charge_points ORDER BY external_id LIMIT 1");
  await page.goto(`/dashboard/charge-points/${point!.external_id}`);
  await expect(page.getByTestId("charge-point-detail")).toContainText("Sessions are not shared with the app");
  await expect(page.locator('a[href*="chargePoint="]')).toHaveCount(0);
  await expect(page.getByTestId("recent-sessions")).toHaveCount(0);
  await page.goto("/dashboard/settings");
  await expect(page.getByTestId("install-config")).toContainText("yes, but sessions are not shared with the app");
});

test("when the copy cannot be read, the overview says so and its retry brings the figures back", async ({ page }, testInfo) => {
  await installAndSync(page, testInfo);
  // The app's database fails this one read: the table the figures come from is briefly not there.
  await sql("ALTER TABLE synced_charges RENAME TO synced_charges_away");
  try {
    await page.goto("/dashboard");
    await expect(page.getByTestId("overview-error")).toBeVisible();
    await expect(page.getByTestId("overview-error")).toContainText("The overview could not be shown");
    await expect(page.getByTestId("overview-error")).not.toContainText("synced_charges"); // no internals
  } finally {
    await sql("ALTER TABLE synced_charges_away RENAME TO synced_charges");
  }
  await page.getByRole("button", { name: "Try again" }).click();
  // The retry asks the server for the page again (a shared CI machine can take a few seconds).
  await expect(page.getByTestId("headline-charge-points-value")).toHaveText("23", { timeout: 15_000 });
  await expect(page.getByTestId("overview-error")).toHaveCount(0);
});
