// What a person sees at the console's sign-in when the account is locked out for a while, and how
// the browser they signed in with before still gets in (its device cookie: lib/auth/staff-device.ts).
import { expect, test } from "@playwright/test";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { requiredEnv, signInAsStaff } from "../helpers/e2e";
import { PRODUCT } from "../helpers/product";

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

test("the browser that signed in before still gets in while strangers keep the account locked; a new browser is told to wait", async ({ page, browser }) => {
  const email = requiredEnv("STAFF_DEV_EMAIL");
  await signInAsStaff(page);
  const device = (await page.context().cookies(`${stack.appUrl}/api/auth/callback/staff`)).find((c) => c.name === PRODUCT.cookies.staffDevice);
  expect(device).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/api/auth/callback/staff" });
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);

  // Strangers spend the account's attempts, and more, from many addresses.
  for (let i = 0; i < 15; i++) {
    await signInStaffWithFetch(email, `guess-${i}`, { headers: { "X-Forwarded-For": `192.0.2.${i + 1}` } });
  }

  const stranger = await browser.newContext();
  const other = await stranger.newPage();
  await other.goto(`${stack.appUrl}/admin/sign-in`);
  await other.getByLabel("Email").fill(email);
  await other.getByLabel("Password").fill(requiredEnv("STAFF_DEV_PASSWORD"));
  await other.getByRole("button", { name: "Sign in" }).click();
  await expect(other.getByTestId("sign-in-error")).toHaveText(/^Too many sign-in attempts\. Try again in \d+ s\.$/);
  await stranger.close();

  await signInAsStaff(page);
});
