// Login CSRF at the redirect_uri, in Chromium: an install completed in a browser that is already
// signed in as someone else is stored at once, but the browser's session changes only when the
// person chooses (lib/auth/pending-sign-in.ts). And operators can sign out.
import { expect, test } from "@playwright/test";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { approveInPortal, operators, requiredEnv, signInAsStaff } from "../helpers/e2e";
import { PRODUCT } from "../helpers/product";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

async function installsOf(operatorId: number): Promise<number> {
  const rows = await sql<{ n: number }>("SELECT count(*)::int AS n FROM installs WHERE operator_id = $1 AND status = 'ACTIVE'", [String(operatorId)]);
  return rows[0]!.n;
}

test("staff signed in → an install asks first; the staff session is intact until the choice; 'stay' keeps it", async ({ page, context }) => {
  const [operator] = await operators();
  await signInAsStaff(page);

  await approveInPortal(page, operator!);
  await expect(page).toHaveURL(`${stack.appUrl}/oauth/continue`);
  await expect(page.getByTestId("current-sign-in")).toHaveText(`You are signed in as staff member ${requiredEnv("STAFF_DEV_EMAIL")}.`);
  await expect(page.getByTestId("pending-operator")).toHaveText(String(operator!.id));
  // The code was redeemed at once (contract §2): the install is stored before anyone chooses.
  expect(await installsOf(operator!.id)).toBe(1);
  await page.screenshot({ path: ".data/test/screenshots/continue-choice.png", fullPage: true });

  // Until the choice, the browser is still the staff member (another tab shows the console).
  const other = await context.newPage();
  await other.goto("/admin");
  await expect(other.getByTestId("staff-email")).toHaveText(requiredEnv("STAFF_DEV_EMAIL"));
  await other.goto("/dashboard");
  // No operator session: the dashboard says whose session this browser has (the staff member's).
  await expect(other.getByRole("heading", { name: "You are signed in to the staff console" })).toBeVisible();
  await other.close();

  await page.getByRole("button", { name: `Stay as staff member ${requiredEnv("STAFF_DEV_EMAIL")}` }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/oauth/continue/stayed`);
  await page.getByTestId("continue-home").click();
  await expect(page.getByTestId("staff-email")).toHaveText(requiredEnv("STAFF_DEV_EMAIL"));

  // The choice was used up: the page has nothing left to continue, and no pending row remains.
  await page.goto("/oauth/continue");
  await expect(page.getByRole("heading", { name: "Nothing to continue" })).toBeVisible();
  expect((await sql<{ n: number }>("SELECT count(*)::int AS n FROM pending_sign_ins"))[0]!.n).toBe(0);
});

test("staff signed in → 'continue as the operator' switches, and ends the staff session for every copy", async ({ page }) => {
  const [operator] = await operators();
  await signInAsStaff(page);
  const staffCookie = (await page.context().cookies()).find((c) => c.name === PRODUCT.cookies.session)!;

  await approveInPortal(page, operator!);
  await page.getByRole("button", { name: `Continue as operator ${operator!.id}` }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");

  await page.goto("/admin");
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
  // The replaced staff cookie does not work anywhere any more.
  const response = await fetch(`${stack.appUrl}/admin`, { headers: { Cookie: `${staffCookie.name}=${staffCookie.value}` }, redirect: "manual" });
  expect(response.headers.get("location") ?? "").toContain("/admin/sign-in");
});

test("operator A signed in → installing as operator B asks; continuing shows B's dashboard", async ({ page }) => {
  const [a, b] = await operators();
  await approveInPortal(page, a!);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`); // no session before: signed in directly
  await expect(page.getByRole("heading", { name: a!.name })).toBeVisible();

  await approveInPortal(page, b!);
  await expect(page).toHaveURL(`${stack.appUrl}/oauth/continue`);
  await expect(page.getByTestId("current-sign-in")).toHaveText(`You are signed in as operator ${a!.id}.`);
  await page.goto("/dashboard"); // still A until the choice
  await expect(page.getByRole("heading", { name: a!.name })).toBeVisible();

  await page.goto("/oauth/continue");
  await page.getByRole("button", { name: `Continue as operator ${b!.id}` }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByRole("heading", { name: b!.name })).toBeVisible();
});

test("the same operator re-installing after an uninstall is signed in directly (no one else's session)", async ({ page }) => {
  const [operator] = await operators();
  await approveInPortal(page, operator!);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await page.goto(`${stack.sandboxUrl}/portal/operators/${operator!.id}`);
  await page.getByRole("button", { name: "Uninstall" }).click();
  await expect(page.getByRole("button", { name: "Connect" })).toBeVisible();

  await approveInPortal(page, operator!);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
});

test("the pending choice belongs to the browser that made the install; another browser cannot use it", async ({ page, browser }) => {
  const [a, b] = await operators();
  await approveInPortal(page, a!);
  await approveInPortal(page, b!);
  await expect(page).toHaveURL(`${stack.appUrl}/oauth/continue`);

  const stranger = await browser.newContext();
  const strangerPage = await stranger.newPage();
  await strangerPage.goto(`${stack.appUrl}/oauth/continue`);
  await expect(strangerPage.getByRole("heading", { name: "Nothing to continue" })).toBeVisible();
  await stranger.close();
});

test("an operator signs out from the dashboard; the dashboard then asks them to come from the portal", async ({ page }) => {
  const [operator] = await operators();
  await approveInPortal(page, operator!);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
  const cookie = (await page.context().cookies()).find((c) => c.name === PRODUCT.cookies.session)!;

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/`);
  await page.goto("/dashboard");
  await expect(page.getByRole("heading", { name: "Open this app from your operator portal" })).toBeVisible();
  // A copy of the cookie taken before signing out is refused too.
  const html = await (await fetch(`${stack.appUrl}/dashboard`, { headers: { Cookie: `${cookie.name}=${cookie.value}` } })).text();
  expect(html).toContain("Open this app from your operator portal");
});
