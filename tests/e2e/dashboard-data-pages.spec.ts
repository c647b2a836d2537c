// The charge points and sessions pages as an operator uses them (issue 13), at a desktop width and a
// phone's: list → search → a charge point → one of its sessions → the sessions list. The page never
// scrolls sideways, the key columns (name, state) stay on screen, and each step's screenshot is
// attached to the report. One install and one sync (run as a separate process, as the worker would),
// then both widths, to keep the test quick.
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { expectAccessible, installAsFirstOperator } from "../helpers/e2e";
import { armApiFault, clearApiFaults, closeSql, operatorRecords, resetWorld, sql } from "../helpers/stack";
import { SESSIONS_PAGE } from "../helpers/dashboard";

test.beforeEach(resetWorld);
test.afterEach(clearApiFaults);
test.afterAll(closeSql);

const WIDTHS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;

async function checkFits(page: Page, width: number) {
  // The document is no wider than the window: nothing makes the page scroll sideways.
  // Polled: a chart sizes itself to its container after the resize (a ResizeObserver), not at once.
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
}

async function shoot(page: Page, testInfo: TestInfo, name: string) {
  await expectAccessible(page, name, [page.viewportSize()!]);
  const body = await page.screenshot({ fullPage: true, path: `${process.env.TEST_DATA_DIR ?? ".data/test"}/screenshots/${name}.png` });
  await testInfo.attach(name, { body, contentType: "image/png" });
}

test("charge points → search → detail → session → sessions, at 1280 and 390 px", async ({ page }, testInfo) => {
  // Two widths, several pages, and axe's checks on each.
  test.setTimeout(120_000);
  await installAsFirstOperator(page);
  const [install] = await sql<{ id: string; operator_id: string }>("SELECT id, operator_id FROM installs WHERE status = 'ACTIVE'");
  const sync = resultOf<{ outcome: string }>(await runAppWorker(["sync", install!.id, "100"]));
  expect(sync.outcome).toBe("completed");
  const operatorId = Number(install!.operator_id);
  const { data: points } = await operatorRecords<{ id: number; name: string | null }>(operatorId, "charge-points");
  const { data: charges } = await operatorRecords<{ chargePointId: number }>(operatorId, "charges");
  // A named charge point with sessions, so the walk reaches a session from its detail page.
  const target = points.find((p) => p.name !== null && charges.some((c) => c.chargePointId === p.id))!;

  // At a desktop width, the walk as an operator clicks it: list → search → detail → a session → the sessions list.
  const desktop = WIDTHS[0];
  await page.setViewportSize(desktop);
  await page.goto("/dashboard/charge-points");
  await expect(page.getByTestId("as-of")).toBeVisible();
  await page.getByRole("searchbox", { name: "Search" }).fill(target.name!);
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/[?&]q=/);
  await page.getByTestId("charge-points").getByRole("link", { name: target.name!, exact: true }).click();
  await expect(page.getByTestId("charge-point-detail")).toHaveAttribute("data-charge-point-id", String(target.id));
  const pages = [
    { key: "charge-points", path: "/dashboard/charge-points", ready: page.getByTestId("charge-points") },
    { key: "charge-point", path: `/dashboard/charge-points/${target.id}`, ready: page.getByTestId("charge-point-detail") },
  ];
  // The Sessions section, while the dashboard has one (a fork may remove it).
  const sessions = SESSIONS_PAGE;
  if (sessions) {
    await page.getByTestId("recent-sessions").getByRole("link").first().click();
    await expect(page.getByTestId("session-charge-point")).toHaveText(target.name!);
    const sessionPath = new URL(page.url()).pathname;

    // The sessions list's amount is the session's price, what Revenue on the Overview sums.
    await page.goto(sessions);
    await expect(page.getByRole("columnheader", { name: "Price" })).toBeVisible();
    const firstSession = page.getByTestId("sessions").locator("tr[data-session-id]").first();
    const listed = (await firstSession.getByTestId("session-price").textContent())!.trim();
    await firstSession.getByRole("link").first().click();
    await expect(page.getByTestId("session-detail")).toBeVisible();
    await expect(page.locator('dt:text-is("Price") + dd')).toHaveText(listed);
    pages.push({ key: "session", path: sessionPath, ready: page.getByTestId("session-detail") }, { key: "sessions", path: sessions, ready: page.getByTestId("sessions") });
  }

  // Each page at both widths: it fits, and its screenshot is attached.
  for (const { name, width, height } of WIDTHS) {
    await page.setViewportSize({ width, height });
    for (const { key, path, ready } of pages) {
      await page.goto(path);
      await expect(ready).toBeVisible();
      if (key === "charge-points") {
        // The key columns are on screen: the name (a link) and the state in words.
        const firstRow = page.getByTestId("charge-points").getByRole("row").first();
        for (const cell of [firstRow.getByRole("link"), firstRow.locator("[data-state]")]) {
          await expect(cell).toBeVisible();
          const box = (await cell.boundingBox())!;
          expect(box.x + box.width).toBeLessThanOrEqual(width);
        }
      }
      await checkFits(page, width);
      await shoot(page, testInfo, `${key}-${name}`);
    }
  }
});

test("when the service does not answer, the page says so and \"Try again\" brings the data in place", async ({ page }, testInfo) => {
  await installAsFirstOperator(page);
  const [row] = await sql<{ install_id: number }>("SELECT install_id FROM installs");
  // Before the first sync the charge points page reads the API live. Four 503s: the first request
  // and the app's three retries of a GET (API_MAX_RETRIES), so this one view fails.
  await armApiFault({ path: "/charge-points", mode: "error503", count: 4, installId: row!.install_id });
  await page.goto("/dashboard/charge-points");
  const failure = page.locator('[data-reason="unavailable"]');
  await expect(failure).toContainText("The service did not answer");
  await shoot(page, testInfo, "charge-points-unavailable");

  // The fault is spent: asking again shows the charge points, at the same address.
  await failure.getByRole("button", { name: "Try again" }).click();
  await expect(page.getByTestId("charge-points").getByRole("row").first()).toBeVisible();
  await expect(failure).toHaveCount(0);
  await expect(page).toHaveURL(/\/dashboard\/charge-points$/);
});
