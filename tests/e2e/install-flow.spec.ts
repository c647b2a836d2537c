// The install flow as an operator lives it, in Chromium: the sandbox's portal → Connect → consent
// → the app's dashboard with the operator's own charge points.
import { expect, test, type Page } from "@playwright/test";
import { closeSql, control, resetWorld, sql, stack } from "../helpers/stack";
import { type Operator, expectAccessible, operators, shownInstallId } from "../helpers/e2e";

type ChargePoint = { id: number; name: string | null };

test.beforeEach(resetWorld);
test.afterAll(closeSql);

/** Walks the portal up to the consent page's Approve, and returns the callback URL the browser was sent to. */
async function connectFromPortal(page: Page, operator: Operator): Promise<void> {
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  // The consent page lists the exact scopes, with offline_access added by the service (contract §2).
  await expect(page.getByRole("listitem").filter({ hasText: /^charge-points:read$/ })).toBeVisible();
  await expect(page.getByRole("listitem").filter({ hasText: /^offline_access$/ })).toBeVisible();
}

test("an operator installs the app from the portal and sees their charge points", async ({ page }) => {
  const all = await operators();
  expect(all.length).toBeGreaterThanOrEqual(3);
  const operator = all.find((o) => o.chargePointCount > 10) ?? all[0]!;
  const { data: expected } = await control<{ data: ChargePoint[] }>("GET", `/operators/${operator.id}/charge-points`);

  await connectFromPortal(page, operator);
  await page.getByRole("button", { name: "Approve" }).click();

  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
  const installs = await control<{ installs: { install_id: number; operator_id: number }[] }>("GET", "/installs");
  // The install's id is on "Settings and access", one link of the dashboard's nav.
  expect(await shownInstallId(page)).toBe(String(installs.installs[0]!.install_id));

  // Before the first sync the charge points page reads the API live: its first page holds the
  // operator's first 10 charge points, as the API lists them.
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Charge points" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard/charge-points`);
  const rows = page.getByTestId("charge-points").getByRole("row");
  await expect(rows).toHaveCount(10);
  const shown = await rows.locator("td:first-child").allTextContents();
  expect(shown).toEqual(expected.slice(0, 10).map((cp) => cp.name ?? `Charge point ${cp.id}`));
  await expect(page.getByTestId("charge-point-count")).toHaveText(`1–10 of ${expected.length}`);

  // perPage changes the page size; the API is asked again.
  await page.getByRole("link", { name: "25", exact: true }).click();
  await expect(rows).toHaveCount(Math.min(25, expected.length));
  await page.screenshot({ path: ".data/test/screenshots/dashboard.png", fullPage: true });

  // And the second page continues where the first ended.
  if (expected.length > 25) {
    await page.getByRole("link", { name: "Next →" }).click();
    await expect(rows.first().locator("td").first()).toHaveText(expected[25]!.name ?? `Charge point ${expected[25]!.id}`);
  }
});

test("a reused authorization code shows the 'already used' page and stores nothing", async ({ page }) => {
  const [operator] = await operators();
  let callbackUrl: string | undefined;
  page.on("request", (request) => {
    if (request.url().startsWith(`${stack.appUrl}/oauth/callback`)) callbackUrl ??= request.url();
  });
  await connectFromPortal(page, operator!);
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  expect(callbackUrl).toBeDefined();

  const before = await sql("SELECT id, version FROM token_grants ORDER BY id");
  await page.goto(callbackUrl!);
  await expect(page.getByTestId("install-failure")).toContainText("already used");
  await expect(page.getByTestId("install-failure")).toContainText("operator portal");
  expect(await sql("SELECT id, version FROM token_grants ORDER BY id")).toEqual(before);
  await expectAccessible(page, "the refused-code page");
  await page.screenshot({ path: ".data/test/screenshots/code-used.png" });
});

test("an expired authorization code shows the refused-code page, naming expiry, and stores no token", async ({ page }) => {
  const [operator] = await operators();
  let callbackUrl: string | undefined;
  // Hold the browser at the consent redirect, as if the operator's connection stalled for over a
  // minute: take the redirect's Location without following it.
  await page.route(`${stack.sandboxUrl}/idp/consent`, async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    const response = await route.fetch({ maxRedirects: 0 });
    callbackUrl = response.headers()["location"];
    await route.fulfill({ status: 200, contentType: "text/html", body: "<p>Held before the redirect_uri.</p>" });
  });
  await connectFromPortal(page, operator!);
  await page.getByRole("button", { name: "Approve" }).click();
  await expect.poll(() => callbackUrl).toMatch(/\/oauth\/callback\?code=/);

  await control("POST", "/clock/advance", { seconds: 61 }); // contract §2: codes live 1 minute
  await page.goto(callbackUrl!);
  // The identity provider's bare invalid_grant cannot say why; the app's neutral page names the
  // causes, expiry among them (docs/spec-gaps.md A11).
  await expect(page.getByTestId("install-failure")).toHaveAttribute("data-reason", "code_refused");
  await expect(page.getByTestId("install-failure")).toContainText("expired");
  expect(await sql("SELECT id FROM token_grants")).toEqual([]);
  await expect(page.getByRole("link", { name: "Open the operator portal" })).toBeVisible();
});
