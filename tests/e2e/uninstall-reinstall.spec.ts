// Uninstall and re-install, as the operator does it (contract §3): the app sees the revocation,
// shows it, and a re-install is a new install with a new install_id and a working dashboard.
import { expect, test } from "@playwright/test";
import { shownInstallId } from "../helpers/e2e";
import { closeSql, control, resetWorld, sql, stack } from "../helpers/stack";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

type SandboxInstall = { install_id: number; operator_id: number; status: string };

async function connectAndApprove(page: import("@playwright/test").Page, operatorName: string) {
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operatorName }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
}

test("uninstall in the portal → the app shows it revoked → re-install → a new install_id and a working dashboard", async ({ page }) => {
  const { operators } = await control<{ operators: { id: number; name: string }[] }>("GET", "/operators");
  const operator = operators[0]!;

  await connectAndApprove(page, operator.name);
  const firstId = (await control<{ installs: SandboxInstall[] }>("GET", "/installs")).installs[0]!.install_id;
  expect(await shownInstallId(page)).toBe(String(firstId));
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("charge-points").getByRole("row").first()).toBeVisible();

  // Uninstall from the operator portal: the service sends install.revoked to the app.
  await page.goto(`${stack.sandboxUrl}/portal/operators/${operator.id}`);
  await page.getByRole("button", { name: "Uninstall" }).click();
  await expect(page.getByRole("button", { name: "Connect" })).toBeVisible();

  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("install-status")).toHaveText("Uninstalled");
  await expect(page.getByTestId("charge-points")).toHaveCount(0);
  const [revoked] = await sql<{ status: string; grants: number }>(
    "SELECT status, (SELECT count(*)::int FROM token_grants g WHERE g.install_row_id = i.id) AS grants FROM installs i WHERE install_id = $1",
    [firstId],
  );
  expect(revoked).toEqual({ status: "REVOKED", grants: 0 }); // no token is kept for a revoked install
  await page.screenshot({ path: `${process.env.TEST_DATA_DIR ?? ".data/test"}/screenshots/uninstalled.png` });

  // Re-install: a new install, a new install_id, the old row kept as history.
  await connectAndApprove(page, operator.name);
  const installs = (await control<{ installs: SandboxInstall[] }>("GET", "/installs")).installs;
  const secondId = installs.find((i) => i.status === "active")!.install_id;
  expect(secondId).not.toBe(firstId);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
  expect(await shownInstallId(page)).toBe(String(secondId));
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  await expect(page.getByTestId("charge-points").getByRole("row").first()).toBeVisible();

  const rows = await sql<{ install_id: number; status: string }>("SELECT install_id, status FROM installs ORDER BY created_at");
  expect(rows).toEqual([
    { install_id: firstId, status: "REVOKED" },
    { install_id: secondId, status: "ACTIVE" },
  ]);
});
