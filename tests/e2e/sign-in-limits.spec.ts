// What a person sees at the console's sign-in when the account is locked out for a while.
import { expect, test } from "@playwright/test";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { requiredEnv } from "../helpers/e2e";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

test("after too many wrong passwords the form says how long to wait, and the right password works once the wait is over", async ({ page }) => {
  const email = requiredEnv("STAFF_DEV_EMAIL");
  // The account's 10 attempts (lib/env.ts default), used up by someone else, from other addresses.
  for (let i = 0; i < 10; i++) {
    await signInStaffWithFetch(email, `guess-${i}`, { headers: { "X-Forwarded-For": `192.0.2.${i + 1}` } });
  }

  await page.goto("/admin/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(requiredEnv("STAFF_DEV_PASSWORD"));
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("sign-in-error")).toHaveText(/^Too many sign-in attempts\. Try again in (5[5-9]|60) s\.$/);
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
  await page.screenshot({ path: ".data/test/screenshots/staff-sign-in-limited.png" });

  await sql("UPDATE rate_limits SET expire = 0 WHERE key NOT LIKE '%\\_lockouts:%'"); // as if the minute had passed
  await page.getByLabel("Password").fill(requiredEnv("STAFF_DEV_PASSWORD"));
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("staff-email")).toHaveText(email);
});
