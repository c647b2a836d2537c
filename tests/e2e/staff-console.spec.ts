// The staff console (/admin), in Chromium: signing in, the installs an operator made through the
// portal, an install's timeline (state changes and webhook deliveries), and the invalid_client banner.
import { createHmac } from "node:crypto";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { closeSql, control, resetWorld, sql, stack } from "../helpers/stack";
import { type Operator, expectAccessible, requiredEnv, signInAsStaff } from "../helpers/e2e";
import { PRODUCT } from "../helpers/product";
import { scaled } from "../helpers/time-scale";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

// scripts/lib/local-env.ts makes this account for every test run; the app only knows its hash.
const staff = {
  get email() {
    return requiredEnv("STAFF_DEV_EMAIL");
  },
  get password() {
    return requiredEnv("STAFF_DEV_PASSWORD");
  },
};

const REFUSED = "That email and password do not match a staff account.";

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto("/admin/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** An operator's install through the portal, as in install-flow.spec.ts, in the page given. */
async function connectInPortal(page: Page, operator: Operator): Promise<void> {
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
}

/** The same, in a browser context of the operator's own, so their session never meets the staff member's. */
async function installAsOperator(browser: Browser): Promise<{ rowId: string; installId: number; operatorId: string; operatorName: string; scopes: string[] }> {
  const [operator] = (await control<{ operators: Operator[] }>("GET", "/operators")).operators;
  const context = await browser.newContext();
  try {
    await connectInPortal(await context.newPage(), operator!);
  } finally {
    await context.close();
  }
  const [row] = await sql<{ id: string; install_id: number; operator_id: string; granted_scopes: string[] }>(
    "SELECT id, install_id, operator_id, granted_scopes FROM installs",
  );
  expect(row?.install_id).toEqual(expect.any(Number));
  return { rowId: row!.id, installId: row!.install_id, operatorId: row!.operator_id, operatorName: operator!.name, scopes: row!.granted_scopes };
}

test("the console needs a staff sign-in; an operator's session is not one", async ({ page }) => {
  await page.goto("/admin");
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
  await expect(page.getByRole("heading", { name: "Staff console" })).toBeVisible();
  await page.goto("/admin/installs/00000000-0000-4000-8000-000000000000");
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
  // The service's install_id form too: nobody learns which install ids exist without signing in.
  await page.goto("/admin/installs/1");
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);

  // An operator who installed the app in this browser holds a next-auth session, but not a staff one.
  const [operator] = (await control<{ operators: Operator[] }>("GET", "/operators")).operators;
  await connectInPortal(page, operator!);
  await page.goto("/admin");
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
  await expect(page.getByTestId("installs")).toHaveCount(0);
});

test("a wrong password and an unknown email get the same refusal, and no session", async ({ page }) => {
  await signIn(page, staff.email, `${staff.password}-wrong`);
  await expect(page.getByTestId("sign-in-error")).toHaveText(REFUSED);
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
  await expect(page.getByLabel("Password")).toHaveValue("");

  await signIn(page, "nobody@example.com", staff.password);
  await expect(page.getByTestId("sign-in-error")).toHaveText(REFUSED);
  await expectAccessible(page, "the sign-in page, refused");
  await page.screenshot({ path: ".data/test/screenshots/staff-sign-in-refused.png" });

  const cookies = await page.context().cookies();
  expect(cookies.map((c) => c.name)).not.toContain(PRODUCT.cookies.session);
  await page.goto("/admin");
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
});

test("staff see an install made in the portal, its history and its webhooks, and sign out", async ({ page, browser }) => {
  // Every console page, and axe's checks on each at two widths.
  test.setTimeout(scaled(120_000));
  const install = await installAsOperator(browser);
  await signInAsStaff(page);

  await expect(page.getByTestId("count-total")).toHaveText("1");
  await expect(page.getByTestId("count-ACTIVE")).toHaveText("1");
  await expect(page.getByTestId("count-REVOKED")).toHaveText("0");
  const row = page.locator(`[data-install-row="${install.rowId}"]`);
  await expect(row.getByTestId("install-link")).toHaveText(String(install.installId));
  await expect(row.getByTestId("operator-id")).toHaveText(install.operatorId);
  await expect(row).toContainText("Connected");
  // Token and sync health in words (issue 14); the scopes moved to the install's own page.
  await expect(row).toContainText("Healthy");
  await expect(row).toContainText("Never synced");
  // A fresh grant: the access token expires within the hour (contract §2), the refresh token in 30 days.
  await expect(row).toContainText(/in \d+ min/);
  await expect(row).toContainText(/in (29|30) d/);
  await expect(row.getByTestId("refresh-unknown")).toHaveCount(0);
  await expectAccessible(page, "the install list");
  await page.screenshot({ path: ".data/test/screenshots/staff-installs.png", fullPage: true });

  await row.getByTestId("install-link").click();
  await expect(page).toHaveURL(`${stack.appUrl}/admin/installs/${install.rowId}`);
  await expect(page.getByTestId("detail-install-id")).toHaveText(String(install.installId));
  await expect(page.getByTestId("detail-operator-id")).toHaveText(install.operatorId);
  // Whose install it is, first: in the heading and in the title.
  await expect(page.getByTestId("detail-title")).toHaveText(`${install.operatorName} · Install ${install.installId}`);
  await expect(page).toHaveTitle(new RegExp(`^${install.operatorName}, install ${install.installId} · Staff console`));
  expect(install.scopes).toContain("charge-points:read");
  await expect(page.getByTestId("detail-scopes")).toHaveText(install.scopes.join(" "));
  // The timeline (issue 14): the state change and the webhook, from their own records.
  const timeline = page.getByTestId("timeline");
  const history = timeline.locator('[data-kind="state"]');
  await expect(history).toHaveCount(1);
  await expect(history.first()).toContainText("Connected");
  await expect(timeline.locator('[data-kind="webhook"]')).toContainText("install.created: processed");

  // The operator uninstalls (the service sends install.revoked): the history grows.
  await control("POST", `/installs/${install.installId}/revoke`);
  await expect
    .poll(async () => (await sql<{ status: string }>("SELECT status FROM installs WHERE id = $1", [install.rowId]))[0]?.status)
    .toBe("REVOKED");
  await page.reload();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(`${install.operatorName} · Install ${install.installId}`);
  await expect(history).toHaveCount(2);
  await expect(history.first()).toContainText("Connected → Uninstalled");
  await expect(history.first()).toContainText("webhook");
  await expect(timeline.locator('[data-kind="webhook"]').first()).toContainText("install.revoked");
  await expectAccessible(page, "an install's page");
  await page.screenshot({ path: ".data/test/screenshots/staff-install-detail.png", fullPage: true });

  // The service's install_id in the address (what operators and the service's tools quote) leads to the install's page.
  await page.goto(`/admin/installs/${install.installId}`);
  await expect(page).toHaveURL(`${stack.appUrl}/admin/installs/${install.rowId}`);
  await expect(page.getByTestId("detail-install-id")).toHaveText(String(install.installId));

  // The other console pages pass the same checks.
  for (const link of ["Webhooks", "Audit log"]) {
    await page.getByRole("link", { name: link, exact: true }).click();
    await expect(page).toHaveTitle(new RegExp(`^${link} · Staff console`));
    await expectAccessible(page, `the ${link} page`);
  }

  // A staff member who opens an operator's dashboard is told where they are, not that they are signed out.
  await page.goto("/dashboard");
  await expect(page.getByTestId("staff-on-dashboard")).toContainText("You are signed in to the staff console");
  await expect(page.getByTestId("signed-out")).toHaveCount(0);
  await expectAccessible(page, "the dashboard, for staff");
  await page.getByRole("link", { name: "Go to the staff console" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/admin`);
  await expect(page.getByTestId("count-REVOKED")).toHaveText("1");
  await expect(page.getByTestId("count-ACTIVE")).toHaveText("0");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
  await page.goto("/admin");
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
});

test("a flagged install shows its reauth_url, and an unknown refresh outcome is called out", async ({ page, browser }) => {
  const install = await installAsOperator(browser);
  // The state lib/installs and lib/oauth leave behind after a 403 NEEDS_REAUTH (contract §7) and after
  // a refresh whose answer never came; written directly here, since only the display is under test.
  const reauthUrl = `${stack.sandboxUrl}/portal/reauthorize?install_id=${install.installId}`;
  await sql("UPDATE installs SET status = 'NEEDS_REAUTH', reauth_url = $2 WHERE id = $1", [install.rowId, reauthUrl]);
  await sql("UPDATE token_grants SET refresh_started_at = now() - interval '5 minutes' WHERE install_row_id = $1", [install.rowId]);

  await signInAsStaff(page);
  await expect(page.getByTestId("count-NEEDS_REAUTH")).toHaveText("1");
  const row = page.locator(`[data-install-row="${install.rowId}"]`);
  await expect(row).toContainText("Re-authorization needed");
  await expect(row.getByTestId("refresh-unknown")).toContainText(/^refresh outcome unknown since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);

  await row.getByTestId("install-link").click();
  await expect(page.getByTestId("reauth-url")).toHaveText(reauthUrl);
  await expect(page.getByTestId("reauth-url")).toHaveAttribute("href", reauthUrl);
  await expect(page.getByTestId("detail-refresh-state")).toContainText("refresh outcome unknown since");
  await expectAccessible(page, "a flagged install's page");
  await page.screenshot({ path: ".data/test/screenshots/staff-install-flagged.png", fullPage: true });
});

test("staff can ask whether a flagged install was re-authorized: one probe clears it", async ({ page, browser }) => {
  const install = await installAsOperator(browser);
  // Flagged in the app, but the service already accepts the install's token again (the operator
  // re-consented without coming back to the app).
  await sql("UPDATE installs SET status = 'NEEDS_REAUTH', reauth_url = $2 WHERE id = $1", [install.rowId, `${stack.sandboxUrl}/portal/reauth/${install.installId}`]);

  await signInAsStaff(page);
  await page.locator(`[data-install-row="${install.rowId}"]`).getByTestId("install-link").click();
  await page.getByRole("button", { name: "Check re-authorization now" }).click();
  await expect(page.getByTestId("reauth")).toHaveCount(0);
  const [row] = await sql<{ status: string; reauth_url: string | null }>("SELECT status, reauth_url FROM installs WHERE id = $1", [install.rowId]);
  expect(row).toEqual({ status: "ACTIVE", reauth_url: null });
  const events = await sql<{ to_status: string; cause: string }>(
    "SELECT to_status, cause FROM install_events WHERE install_row_id = $1 ORDER BY occurred_at DESC LIMIT 1",
    [install.rowId],
  );
  expect(events).toEqual([{ to_status: "ACTIVE", cause: "staff" }]);
});

test("a banner says so while the token endpoint's circuit is open (invalid_client)", async ({ page }) => {
  const clientId = requiredEnv("OAUTH_CLIENT_ID");
  const clearCircuit = () => sql("DELETE FROM oauth_client_health WHERE client_id IN ($1, 'another-client')", [clientId]);
  await clearCircuit();
  try {
    await signInAsStaff(page);
    await expect(page.getByTestId("circuit-banner")).toHaveCount(0);

    // Another client's open circuit is not this app's problem.
    await sql("INSERT INTO oauth_client_health (client_id, circuit_open, reason, opened_at, updated_at) VALUES ('another-client', true, 'invalid_client', now(), now())");
    await page.reload();
    // No installs here: the list's empty state stands for the page having rendered.
    await expect(page.getByTestId("installs-empty")).toBeVisible();
    await expect(page.getByTestId("circuit-banner")).toHaveCount(0);

    // Opened with the configured secret, as lib/oauth/circuit.ts records it (a circuit opened with
    // another secret no longer applies).
    const fingerprint = createHmac("sha256", requiredEnv("NEXTAUTH_SECRET")).update(`${clientId}\n${requiredEnv("OAUTH_CLIENT_SECRET")}`).digest("hex");
    await sql(
      "INSERT INTO oauth_client_health (client_id, circuit_open, reason, secret_fingerprint, opened_at, updated_at) VALUES ($1, true, 'invalid_client: client authentication failed', $2, now(), now())",
      [clientId, fingerprint],
    );
    await page.reload();
    const banner = page.getByTestId("circuit-banner");
    await expect(banner).toContainText("invalid_client");
    await expect(banner).toContainText("paused all token refreshes");
    await expect(banner).toContainText("ask the service operator to re-issue this app's client (this rotates the client secret)");
    await expect(banner).toContainText("OAUTH_CLIENT_SECRET");
    await expect(banner).toContainText("Refreshing resumes by itself");
    await expectAccessible(page, "the install list with the circuit banner");
    await page.screenshot({ path: ".data/test/screenshots/staff-circuit-open.png", fullPage: true });

    // Closed again (as lib/oauth does once the configuration changes): the banner goes.
    await sql("UPDATE oauth_client_health SET circuit_open = false WHERE client_id = $1", [clientId]);
    await page.reload();
    await expect(page.getByTestId("installs-empty")).toBeVisible();
    await expect(banner).toHaveCount(0);
  } finally {
    await clearCircuit();
  }
});

test("an install id that is not a uuid, or names no install, shows the console's 404", async ({ page }) => {
  await signInAsStaff(page);
  for (const id of ["not-a-uuid", "00000000-0000-4000-8000-000000000000", "424242", "99999999999999999999", "0"]) {
    const response = await page.goto(`/admin/installs/${id}`);
    expect(response?.status()).toBe(404);
    await expect(page.getByTestId("install-not-found")).toContainText("No such install");
  }
  await expectAccessible(page, "the console's 404");
});
