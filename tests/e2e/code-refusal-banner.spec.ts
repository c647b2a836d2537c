// The staff console warns when the identity provider keeps refusing fresh authorization codes
// (issue 8: a redirect_uri registration fault must not stay invisible). The sandbox answers like a
// server other than Hydra here (plain invalid_grant), so nothing but the pattern can tell.
import { expect, test, type Page } from "@playwright/test";
import { closeSql, control, resetWorld, stack } from "../helpers/stack";
import { expectAccessible, requiredEnv, signInAsStaff } from "../helpers/e2e";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

async function refuseFreshCode(page: Page, n: number): Promise<void> {
  // As a stranger would make it, naming the right issuer so the code reaches the identity provider.
  await page.goto(`/oauth/callback?${new URLSearchParams({ code: `volt_ac_fresh${n}-0123456789abcdef`, state: "abcdefgh12", iss: requiredEnv("OAUTH_ISSUER") })}`);
  await expect(page.getByTestId("install-failure")).toHaveAttribute("data-reason", "code_refused");
}

test("three refused fresh codes raise 'check the redirect_uri registration'; a successful install clears it", async ({ browser }) => {
  await control("POST", "/idp-behaviour", { errorWording: "generic" });
  const operator = await browser.newContext();
  const operatorPage = await operator.newPage();
  const staff = await (await browser.newContext()).newPage();
  await signInAsStaff(staff);

  await refuseFreshCode(operatorPage, 1);
  await refuseFreshCode(operatorPage, 2);
  await staff.reload();
  await expect(staff.getByTestId("code-refusal-banner")).toHaveCount(0); // two can be operators who waited too long

  await refuseFreshCode(operatorPage, 3);
  await staff.reload();
  const banner = staff.getByTestId("code-refusal-banner");
  await expect(banner).toContainText("check the redirect_uri registration");
  await expect(banner).toContainText("refused 3 fresh authorization codes");
  await expect(banner).toContainText("OAUTH_REDIRECT_URI");
  await expectAccessible(staff, "the install list with the code refusal banner");
  await staff.screenshot({ path: ".data/test/screenshots/staff-code-refusals.png", fullPage: true });

  // An operator connects successfully: whatever it was, it works now.
  const [first] = (await control<{ operators: { name: string }[] }>("GET", "/operators")).operators;
  await operatorPage.goto(`${stack.sandboxUrl}/portal`);
  await operatorPage.getByRole("link", { name: first!.name }).click();
  await operatorPage.getByRole("button", { name: "Connect" }).click();
  await operatorPage.getByRole("button", { name: "Approve" }).click();
  await expect(operatorPage).toHaveURL(`${stack.appUrl}/dashboard`);
  await staff.reload();
  await expect(staff.getByTestId("installs")).toBeVisible();
  await expect(banner).toHaveCount(0);
});
