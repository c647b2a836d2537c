// The Energy beta in a real Chromium (an optional section: app/dashboard/sections.ts; contract §4.3):
// an install granted energy:read, the page explains the beta while it is off for the operator; the
// service's operator enables it in the console; the chart of an EVSE with sessions renders. Screenshots
// at desktop and phone widths go to the test artifacts. In the Energy section's folder: removing the
// section removes it.
import { expect, test } from "@playwright/test";
import { checkAndScreenshot, operators, syncNow } from "../../../../tests/helpers/e2e";
import { closeSql, control, operatorRecords, resetWorld, sql, stack } from "../../../../tests/helpers/stack";
import { scaled } from "../../../../tests/helpers/time-scale";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

test.setTimeout(scaled(120_000));

test("energy beta: off for the operator → enabled in the service's console → the chosen EVSE's chart", async ({ page }) => {
  const operator = (await operators()).find((o) => o.id === 1001)!;
  // The test stack's registration has no energy:read (scripts/test.ts): this test registers it before the install.
  await control("POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "energy:read"] });
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  const [install] = await sql<{ id: string }>("SELECT id FROM installs WHERE operator_id = '1001'");
  // The EVSE picker offers the charge points of the local copy: one sync makes it.
  expect((await syncNow(install!.id)).outcome).toBe("completed");

  // Energy (beta): off for the operator, the page explains; the service operator enables it in the console.
  await page.goto(`${stack.appUrl}/dashboard/energy`);
  await expect(page.getByTestId("energy-state")).toHaveAttribute("data-state", "not_enabled");
  await page.goto(`${stack.sandboxUrl}/console`);
  await page.getByRole("button", { name: `Enable for ${operator.name}` }).click();

  // An EVSE with sessions (the sandbox gives a connector the charges whose id mod its connector count is its index).
  const chargePoints = (await operatorRecords<{ id: number; connectors: { id: number }[] }>(1001, "charge-points")).data;
  const charges = (await operatorRecords<{ id: number; chargePointId: number }>(1001, "charges")).data;
  const cp = chargePoints.find((c) => charges.some((charge) => charge.chargePointId === c.id && charge.id % c.connectors.length === 0))!;
  await page.goto(`${stack.appUrl}/dashboard/energy?evse=${cp.id}:${cp.connectors[0]!.id}`);
  await expect(page.getByTestId("energy-state")).toHaveAttribute("data-state", "ok");
  await expect(page.getByTestId("energy-chart").locator(".recharts-bar-rectangle").first()).toBeVisible();
  await expect(page.getByTestId("energy-sessions").getByRole("row").first()).toBeVisible();
  await checkAndScreenshot(page, "dashboard-energy");

  // A Norwegian operator (their choice on "Settings and access", a cookie: docs/spec-gaps.md A152)
  // reads the page in Norwegian, from the section's own catalogue; the days stay UTC days (A153).
  await page.context().addCookies([{ name: "dashboard-locale", value: "nb", url: stack.appUrl }]);
  await page.reload();
  await expect(page.locator("#energy-heading")).toHaveText("Energi");
  await expect(page.getByTestId("energy-chart").locator("figcaption")).toHaveText("Energi per dag (kWh, UTC-døgn)");
  await expect(page.getByRole("columnheader", { name: "Startet" })).toBeVisible();
  await checkAndScreenshot(page, "dashboard-energy-nb");
});
