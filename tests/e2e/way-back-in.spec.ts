// A way back in and a way out, as an operator clicks them (issue 13): install → sign out → the
// dashboard says to open the app from the portal → the portal's "Open" → signed in to the SAME
// install (no consent screen, no new install, the token chain intact) → uninstalled → every page
// says so and links to the portal, and the home page offers no dashboard. Screenshots at desktop
// and phone widths go to the test artifacts.
import { expect, test, type Page } from "@playwright/test";
import { approveInPortal, expectAccessible, operators, shownInstallId } from "../helpers/e2e";
import { closeSql, control, expireAccessToken, resetWorld, sql, stack, tokenCalls } from "../helpers/stack";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

const SHOTS = `${process.env.TEST_DATA_DIR ?? ".data/test"}/screenshots`;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/** Both widths, and at the phone's nothing wider than the screen (no sideways scrolling); axe's checks at both. */
async function screenshots(page: Page, name: string) {
  await expectAccessible(page, name);
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: `${SHOTS}/${name}-1280.png`, fullPage: true });
  await page.setViewportSize(PHONE);
  // Polled: a chart sizes itself to its container after the resize (a ResizeObserver), not at once.
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  await page.screenshot({ path: `${SHOTS}/${name}-390.png`, fullPage: true });
  await page.setViewportSize(DESKTOP);
}

test("signed out → open from the portal → the same install; uninstalled → every page says so", async ({ page }) => {
  const operator = (await operators())[0]!;
  await approveInPortal(page, operator);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("operator-name")).toHaveText(operator.name);
  await screenshots(page, "way-in-dashboard");
  const installId = await shownInstallId(page);

  // The session ends: the dashboard sends the operator to the portal, and offers no way in of its own.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/`);
  await page.goto("/dashboard");
  await expect(page.getByRole("heading", { name: "Open this app from your operator portal" })).toBeVisible();
  await expect(page.getByRole("button", { name: /connect/i })).toHaveCount(0);
  await screenshots(page, "way-in-signed-out");

  // The portal's Open: no consent screen, straight back to the dashboard of the same install.
  await page.getByTestId("portal-link").click();
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Open" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
  expect(await shownInstallId(page)).toBe(installId);
  const rows = await sql<{ id: string; install_id: number }>("SELECT id, install_id FROM installs");
  expect(rows.map((r) => r.install_id)).toEqual([Number(installId)]);
  expect((await control<{ installs: unknown[] }>("GET", "/installs")).installs).toHaveLength(1);

  // The token chain is intact: one refresh, and the dashboard reads again.
  const before = (await tokenCalls(Number(installId))).refresh_token;
  await expireAccessToken(rows[0]!.id, false);
  // The charge points page reads the API live before the first sync, so it needs the refreshed token.
  await page.goto("/dashboard/charge-points");
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
  await expect(page.getByTestId("charge-points").getByRole("row").first()).toBeVisible();
  expect((await tokenCalls(Number(installId))).refresh_token).toBe(before + 1);

  // Uninstalled: the dashboard says what happened and when, links to the portal, and shows no sections.
  await control("POST", `/installs/${installId}/revoke`);
  await page.goto("/dashboard");
  await expect(page.getByTestId("install-status")).toHaveText("Uninstalled");
  await expect(page.getByTestId("install-lost")).toContainText("The app was uninstalled on");
  await expect(page.getByTestId("portal-link")).toHaveAttribute("href", `${stack.sandboxUrl}/portal`);
  await expect(page.getByRole("navigation", { name: "Dashboard" })).toHaveCount(0);
  await expect(page.getByTestId("charge-points")).toHaveCount(0);
  await screenshots(page, "way-out-uninstalled");

  // The home page offers no dashboard that no longer exists.
  await page.goto("/");
  await expect(page.getByTestId("install-lost")).toBeVisible();
  await expect(page.getByTestId("open-dashboard")).toHaveCount(0);
  await screenshots(page, "way-out-home");
});
