// NEEDS_REAUTH end to end (contract §3, §7): the app owner widens the app's scopes in the
// service's console → the operator's dashboard shows a banner and the app stops calling the API
// for that install → the operator re-authorizes → back in the app, the banner is gone and data shows.
import { expect, test } from "@playwright/test";
import { expectAccessible } from "../helpers/e2e";
import { closeSql, control, resetWorld, sandboxEvents, sql, stack } from "../helpers/stack";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

test("widen the scopes → banner, no API calls while flagged → re-authorize → banner gone, data shows", async ({ page }) => {
  const { operators } = await control<{ operators: { id: number; name: string }[] }>("GET", "/operators");
  const operator = operators[0]!;
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  // Before the first sync the charge points page reads the API live (the Overview reads only the copy).
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("charge-points").getByRole("row").first()).toBeVisible();
  const installId = (await control<{ installs: { install_id: number }[] }>("GET", "/installs")).installs[0]!.install_id;

  // The app owner widens the scopes in the service's console.
  await page.goto(`${stack.sandboxUrl}/console`);
  await page.getByRole("checkbox", { name: "teams:write" }).check();
  await page.getByRole("button", { name: "Save scopes" }).click();
  expect((await control<{ installs: { needs_reauth: boolean }[] }>("GET", "/installs")).installs[0]!.needs_reauth).toBe(true);

  // The next API call meets 403 NEEDS_REAUTH: the dashboard shows the banner at once. (Before the
  // first sync the charge points page reads the API live; once the copy exists, the sync or the
  // install check meets the flag instead.)
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("reauth-banner").first()).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("install-status")).toHaveText("Re-authorization needed");
  await expect(page.getByTestId("reauth-banner")).toBeVisible();
  await expect(page.getByTestId("charge-points")).toHaveCount(0);
  await expectAccessible(page, "the approval banner");
  await page.screenshot({ path: `${process.env.TEST_DATA_DIR ?? ".data/test"}/screenshots/reauth-banner.png`, fullPage: true });

  // While flagged, page views and jobs make no API call for the install.
  const apiCalls = async () => (await sandboxEvents("api")).filter((e) => e.detail.install_id === installId).length;
  const before = await apiCalls();
  for (let i = 0; i < 3; i++) await page.reload();
  await fetch(`${stack.appUrl}/api/cron/reconcile`, { method: "POST", headers: { Authorization: `Bearer ${process.env.CRON_SECRET}` } });
  expect(await apiCalls()).toBe(before);

  // Re-authorize: the service's page lists the exact new scopes, offline_access included.
  await page.getByRole("button", { name: "Review and approve" }).click();
  await expect(page.getByRole("listitem").filter({ hasText: /^teams:write$/ })).toBeVisible();
  await expect(page.getByRole("listitem").filter({ hasText: /^offline_access$/ })).toBeVisible();
  await page.getByRole("button", { name: "Approve" }).click();

  // Back in the app: one probe sees the API answering again and clears the flag.
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("reauth-banner")).toHaveCount(0);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("charge-points").getByRole("row").first()).toBeVisible();
  const [install] = await sql<{ status: string; granted_scopes: string[]; reauth_url: string | null }>(
    "SELECT status, granted_scopes, reauth_url FROM installs WHERE install_id = $1",
    [installId],
  );
  expect(install).toMatchObject({ status: "ACTIVE", reauth_url: null });
  expect(install!.granted_scopes).toContain("teams:write");
});

test("re-consent at the service's page without the banner's button → back in the app, the banner is gone", async ({ page }) => {
  const { operators } = await control<{ operators: { id: number; name: string }[] }>("GET", "/operators");
  const operator = operators[1]!;
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await control("POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:write"] });
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("reauth-banner")).toBeVisible();

  // The operator approves from the service's own page (a support link), not through the app.
  const [row] = await sql<{ reauth_url: string }>("SELECT reauth_url FROM installs WHERE status = 'NEEDS_REAUTH'");
  await page.goto(row!.reauth_url);
  await page.getByRole("button", { name: "Approve" }).click();
  // The service sends the browser back to /dashboard; coming from the service's page, the visit
  // probes at once (lib/installs/reconcile.ts, reconcileOnVisit) and the flag clears.
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("reauth-banner")).toHaveCount(0);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
});

test("re-consent the app cannot see (approved elsewhere, the app opened by its address) → \"I've already approved it\" clears the banner", async ({ page }) => {
  const { operators } = await control<{ operators: { id: number; name: string }[] }>("GET", "/operators");
  const operator = operators[2]!;
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await control("POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:write"] });
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("reauth-banner")).toBeVisible();

  // Approved on another device: this browser never visits the service's page.
  const [row] = await sql<{ reauth_url: string }>("SELECT reauth_url FROM installs WHERE status = 'NEEDS_REAUTH'");
  const approved = await fetch(row!.reauth_url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "decision=approve", redirect: "manual" });
  expect(approved.status).toBe(303);
  await page.goto(`${stack.appUrl}/dashboard`);
  // Flagged a moment ago and looked at since: not due yet (a young flag is probed once a minute).
  await expect(page.getByTestId("reauth-banner")).toBeVisible();

  await page.getByTestId("reauth-check").click();
  await expect(page.getByTestId("reauth-banner")).toHaveCount(0);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("charge-points").getByRole("row").first()).toBeVisible();
});
