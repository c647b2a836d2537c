// The console's actions in Chromium (issue 14): a console operator uses two actions on an install and
// finds them in the audit log; a viewer sees the same page without a single button. At desktop and
// phone widths, with no sideways scrolling.
import { expect, test, type Page } from "@playwright/test";
import { closeSql, installViaPortal, resetWorld, sql, stack } from "../helpers/stack";
import { requiredEnv, signInAsStaff } from "../helpers/e2e";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

const SHOTS = `${process.env.TEST_DATA_DIR ?? ".data/test"}/screenshots`;
const PHONE = { width: 390, height: 844 };

async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

test("a console operator refreshes and syncs an install, and finds both in the audit log", async ({ page }) => {
  const install = await installViaPortal(1001);
  // The callback queued the first sync; clear it so "Sync now" queues one of its own.
  await sql("DELETE FROM pgboss.job WHERE name = 'sync.install'");
  await page.setViewportSize({ width: 1280, height: 800 });
  await signInAsStaff(page);
  await expect(page.getByTestId("staff-role")).toHaveText("operator");

  await page.goto(`/admin/installs/${install.installRowId}`);
  const panel = page.getByTestId("actions-panel");
  await panel.getByRole("button", { name: "Refresh tokens now" }).click();
  await expect(panel.getByTestId("action-result-refresh")).toContainText("Refreshed: the install's tokens are version 2");
  await panel.getByRole("button", { name: "Sync now" }).click();
  await expect(panel.getByTestId("action-result-sync")).toContainText("Queued: the worker syncs this install next");
  await page.screenshot({ path: `${SHOTS}/console-actions-operator-1280.png`, fullPage: true });

  await panel.getByTestId("audit-link").click();
  await expect(page).toHaveURL(new RegExp(`/admin/audit\\?install=${install.installRowId}$`));
  const lines = page.getByTestId("audit").locator("tr[data-audit-line]");
  await expect(lines).toHaveCount(2);
  await expect(lines.nth(0)).toContainText("Sync now");
  await expect(lines.nth(0)).toHaveAttribute("data-outcome", "queued");
  await expect(lines.nth(1)).toContainText("Refresh tokens now");
  await expect(lines.nth(1)).toHaveAttribute("data-outcome", "refreshed");
  await expect(lines.nth(1)).toContainText(requiredEnv("STAFF_DEV_EMAIL"));
  await page.screenshot({ path: `${SHOTS}/console-audit-1280.png`, fullPage: true });

  await page.setViewportSize(PHONE);
  await expectNoSidewaysScroll(page);
  await page.screenshot({ path: `${SHOTS}/console-audit-390.png`, fullPage: true });
  await page.goto(`/admin/installs/${install.installRowId}`);
  await expect(page.getByTestId("actions-panel").getByRole("button", { name: "Mark for re-install" })).toBeVisible();
  await expectNoSidewaysScroll(page);
  await page.getByTestId("actions-panel").screenshot({ path: `${SHOTS}/console-actions-operator-390.png` });
});

test("a viewer sees the install and the audit log, and no action button", async ({ page }) => {
  const install = await installViaPortal(1001);
  await page.setViewportSize(PHONE);
  await page.goto("/admin/sign-in");
  await page.getByLabel("Email").fill(requiredEnv("STAFF_VIEWER_DEV_EMAIL"));
  await page.getByLabel("Password").fill(requiredEnv("STAFF_VIEWER_DEV_PASSWORD"));
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/admin`);
  await expect(page.getByTestId("staff-role")).toHaveText("viewer");

  await page.goto(`/admin/installs/${install.installRowId}`);
  const panel = page.getByTestId("actions-panel");
  await expect(panel.getByTestId("actions-viewer")).toContainText("You are signed in as a viewer");
  await expect(panel.getByRole("button")).toHaveCount(0);
  await expect(page.locator("form[data-action]")).toHaveCount(0);
  await expectNoSidewaysScroll(page);
  await panel.screenshot({ path: `${SHOTS}/console-actions-viewer-390.png` });

  await page.goto("/admin/audit");
  await expect(page.getByTestId("audit-empty")).toBeVisible();
  await expectNoSidewaysScroll(page);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: `${SHOTS}/console-audit-empty-1280.png`, fullPage: true });
});
