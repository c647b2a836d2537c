// The teams write through the whole story (contract §2, §3, §7): the app under test has "manage
// teams" on (scripts/test.ts), the app owner widens the registered scopes in the service's console →
// the operator's dashboard shows the re-authorization banner → the operator approves at the service →
// renames a team → the new name shows in the app, and the service has it. Screenshots at desktop and
// phone widths go to the test artifacts. In the Teams section's folder: removing the section removes it.
import { expect, test } from "@playwright/test";
import { checkAndScreenshot, operators, syncNow } from "../../../../tests/helpers/e2e";
import { closeSql, operatorRecords, resetWorld, sql, stack } from "../../../../tests/helpers/stack";
import { scaled } from "../../../../tests/helpers/time-scale";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

test.setTimeout(scaled(120_000));

test("manage teams: widen the scopes → banner → approve at the service → rename a team", async ({ page }) => {
  const operator = (await operators()).find((o) => o.id === 1001)!;
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  const [install] = await sql<{ id: string; install_id: number }>("SELECT id, install_id FROM installs WHERE operator_id = '1001'");

  // As shipped the registration has no teams scope: the page says what the feature needs.
  await page.goto(`${stack.appUrl}/dashboard/teams`);
  await expect(page.getByTestId("teams-write-state")).toHaveAttribute("data-state", "not_granted");
  await expect(page.getByTestId("rename-team-form")).toHaveCount(0);

  // The app owner widens the registered scopes at the service (the app's "manage teams" needs teams:write).
  await page.goto(`${stack.sandboxUrl}/console`);
  await page.getByRole("checkbox", { name: "teams:write" }).check();
  await page.getByRole("button", { name: "Save scopes" }).click();

  // The next API call for the install (here the scheduled sync) meets NEEDS_REAUTH: the banner shows.
  expect((await syncNow(install!.id)).outcome).not.toBe("completed");
  await page.goto(`${stack.appUrl}/dashboard/teams`);
  await expect(page.getByTestId("reauth-banner")).toBeVisible();

  // The operator approves the new list at the service and comes back.
  await page.getByRole("button", { name: "Review and approve" }).click();
  await expect(page.getByRole("listitem").filter({ hasText: /^teams:write$/ })).toBeVisible();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("reauth-banner")).toHaveCount(0);

  // The next sync copies the teams now granted; the page offers the rename.
  expect((await syncNow(install!.id)).outcome).toBe("completed");
  const [team] = (await operatorRecords<{ id: number; name: string }>(1001, "teams")).data.sort((a, b) => a.name.localeCompare(b.name, "en"));
  await page.goto(`${stack.appUrl}/dashboard/teams`);
  await expect(page.getByTestId("teams-write-state")).toHaveAttribute("data-state", "granted");
  const row = page.locator(`[data-team-id="${team!.id}"]`);
  await expect(row.getByTestId("team-name")).toHaveText(team!.name);

  // A bad name is refused in the form, the typed text kept.
  await row.getByRole("textbox").fill("a\u0007b");
  await row.getByRole("button", { name: "Rename" }).click();
  await expect(row.getByTestId("rename-team-message")).toHaveAttribute("data-reason", "invalid");
  await expect(row.getByRole("textbox")).toHaveValue("a\u0007b");

  await row.getByRole("textbox").fill("Night crew");
  await row.getByRole("button", { name: "Rename" }).click();
  await expect(row.getByTestId("rename-team-message")).toHaveText("Renamed to “Night crew”.");
  await expect(row.getByTestId("team-name")).toHaveText("Night crew");
  expect((await operatorRecords<{ id: number; name: string }>(1001, "teams")).data.find((t) => t.id === team!.id)?.name).toBe("Night crew");
  await checkAndScreenshot(page, "dashboard-teams");

  // A Norwegian operator (their choice on "Settings and access", a cookie: docs/spec-gaps.md A152)
  // reads the page, the form and the action's answer in Norwegian, from the section's own catalogue.
  await page.context().addCookies([{ name: "dashboard-locale", value: "nb", url: stack.appUrl }]);
  await page.reload();
  await expect(page.locator("#teams-heading")).toHaveText("Team");
  await expect(page.getByTestId("teams-write-state")).toHaveText("Du har latt denne appen endre teamene dine: gi ett av dem nytt navn nedenfor. Det nye navnet lagres hos tjenesten.");
  await row.getByRole("textbox").fill("Nattskift");
  await row.getByRole("button", { name: "Endre navn" }).click();
  await expect(row.getByTestId("rename-team-message")).toHaveText("Nytt navn: «Nattskift».");
  await checkAndScreenshot(page, "dashboard-teams-nb");
});
