// reauth_url only to the service (contract §7; lib/partner-api/service-origins.ts), in Chromium: a reauth_url
// outside the service's origins is never followed, from the dashboard's button or the staff console's link.
import { expect, test } from "@playwright/test";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { installAsFirstOperator, signInAsStaff } from "../helpers/e2e";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

test("a reauth_url outside the service's origins is never followed, from the dashboard or the console", async ({ page, browser }) => {
  const foreign = "https://reauth.attacker.example";
  const visited: string[] = [];
  page.on("request", (request) => {
    if (request.url().startsWith(foreign)) visited.push(request.url());
  });

  // The operator's dashboard shows the button for the service's own reauth_url...
  await installAsFirstOperator(page);
  const [install] = await sql<{ id: string; install_id: number }>("SELECT id, install_id FROM installs");
  await sql("UPDATE installs SET status = 'NEEDS_REAUTH', reauth_url = $2 WHERE id = $1", [install!.id, `${stack.sandboxUrl}/portal/reauth/${install!.install_id}`]);
  await page.reload();
  const button = page.getByRole("button", { name: "Review and approve" });
  await expect(button).toBeVisible();

  // ...and when the stored link is someone else's by the time it is pressed, the app stays put.
  await sql("UPDATE installs SET reauth_url = $2 WHERE id = $1", [install!.id, `${foreign}/portal/reauth/${install!.install_id}`]);
  await button.click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("reauth-banner")).toContainText("Open the app in your operator portal");
  await expect(page.getByRole("button", { name: "Review and approve" })).toHaveCount(0);
  expect(visited).toEqual([]);

  // The staff console shows the state, and no link to copy.
  const staffContext = await browser.newContext();
  try {
    const staffPage = await staffContext.newPage();
    await signInAsStaff(staffPage);
    await staffPage.goto(`/admin/installs/${install!.id}`);
    await expect(staffPage.getByTestId("reauth")).toBeVisible();
    await expect(staffPage.getByTestId("reauth-url-refused")).toBeVisible();
    await expect(staffPage.getByTestId("reauth-url")).toHaveCount(0);
    await expect(staffPage.getByTestId("reauth")).not.toContainText("attacker.example");
  } finally {
    await staffContext.close();
  }
});
