// What the faults of issue 34 leave for people to read, in Chromium at desktop and phone widths: the
// operator's "connect again" banner after a lost refresh answer (A185), and in the staff console a
// rate-limit hold with what the service said and its clear action (A180), records stored with their
// text made safe (A181), and the ids of deliveries refused unrecorded, for a targeted replay (A177).
// The faults themselves are made and tested in tests/integration (token-lifecycle, api-faults, sync,
// webhook-log); here their traces are set in the database as those paths write them, and looked at.
import { expect, test } from "@playwright/test";
import { approveInPortal, checkAndScreenshot, operators, signInAsStaff, syncNow } from "../helpers/e2e";
import { closeSql, resetWorld, sql } from "../helpers/stack";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

test("a lost refresh answer: the operator is told to connect again from the portal before the access token expires", async ({ page }) => {
  await approveInPortal(page, (await operators())[0]!);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
  await sql("UPDATE token_grants SET refresh_answer_lost_at = now(), access_token_expires_at = now() + interval '40 minutes'");

  await page.reload();
  await expect(page.getByRole("heading", { name: "Connect the app again from your operator portal" })).toBeVisible();
  await expect(page.getByText("your settings and data are kept")).toBeVisible();
  await checkAndScreenshot(page, "fault-traces-reconnect");
});

test("staff see a rate-limit hold and what the service said, cleaned records, and the delivery ids to replay", async ({ browser, page }) => {
  const operator = await browser.newContext();
  await approveInPortal(await operator.newPage(), (await operators())[0]!);
  await operator.close();
  const [install] = await sql<{ id: string }>("SELECT id FROM installs");
  expect((await syncNow(install!.id)).outcome).toBe("completed");
  await sql("UPDATE api_budgets SET held_until = now() + interval '50 seconds', hold_said = '429 with RateLimit-ResetsIn: 99999999999'");
  await sql("UPDATE sync_runs SET records_cleaned = 2 WHERE resource = 'charge_points'");
  const ids = ["whd_5f0c1e9a-7a43-4d5e-9d6b-2f1a0c3b4d5e", "whd_8b2d4f6a-1c3e-4a5b-8c7d-9e0f1a2b3c4d"];
  await sql(
    "INSERT INTO webhook_rejections (minute, reason, count, first_at, last_at, delivery_ids) VALUES (date_trunc('minute', now()), 'not_recorded', 2, now(), now(), $1)",
    [ids],
  );

  await signInAsStaff(page);
  await page.goto(`/admin/installs/${install!.id}`);
  await expect(page.getByTestId("budget-hold")).toContainText("the service said “429 with RateLimit-ResetsIn: 99999999999”");
  await expect(page.getByRole("button", { name: "Clear the rate-limit hold" })).toBeVisible();
  await expect(page.getByText("2 record(s) held a NUL or a lone surrogate")).toBeVisible();
  await checkAndScreenshot(page, "fault-traces-console-install");

  await page.goto("/admin/webhooks");
  await expect(page.getByTestId("rejection-delivery-ids")).toContainText(ids.join(", "));
  await checkAndScreenshot(page, "fault-traces-console-webhooks");
});
