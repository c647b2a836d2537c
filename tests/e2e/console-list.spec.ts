// The staff console's install list in Chromium (issue 14): a staff member searches, filters and pages
// through installs on a desktop screen and on a phone, and the page never scrolls sideways. The
// scale itself (10,000 installs, bounded queries) is tests/integration/console-list.test.ts's job.
import { expect, test, type Page } from "@playwright/test";
import { closeSql, resetWorld, sql } from "../helpers/stack";
import { expectAccessible, requiredEnv, signInAsStaff } from "../helpers/e2e";
import { recordLatestFromRuns } from "../helpers/sync-latest";
import { scaled } from "../helpers/time-scale";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

const COUNT = 60;
const LONG_SLUG = "northwind-charging-oslo-harbour-depot-east";

/**
 * Where the browser broke a text onto a new line: for each line after the first, the two characters
 * around the break. Read from the layout itself (a rectangle per character), not from a class name.
 */
async function lineBreaks(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).first().evaluate((element) => {
    const text = element.firstChild!;
    const content = text.textContent ?? "";
    const breaks: string[] = [];
    let top: number | null = null;
    for (let i = 0; i < content.length; i += 1) {
      const range = document.createRange();
      range.setStart(text, i);
      range.setEnd(text, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect) continue;
      if (top !== null && rect.top > top + 2) breaks.push(content.slice(Math.max(0, i - 1), i + 1));
      top = rect.top;
    }
    return breaks;
  });
}

/**
 * COUNT installs written straight into the app's tables, only the list being under test: operator
 * "Depot Operator <n>" (id 200000 + n), install id n, the newest first by n. Their grants hold a
 * placeholder instead of sealed tokens: nothing here calls the API, and the list never reads tokens.
 */
async function seedInstalls(): Promise<Record<number, string>> {
  const rows = await sql<{ id: string; install_id: number }>(
    `INSERT INTO installs (id, install_id, client_id, operator_id, operator_name, slug, granted_scopes, status, created_at, status_changed_at, updated_at)
     SELECT gen_random_uuid(), n, $1, (200000 + n)::text, 'Depot Operator ' || n, 'depot-' || n, ARRAY['charge-points:read'], 'ACTIVE',
            now() - make_interval(mins => n), now() - make_interval(mins => n), now()
     FROM generate_series(1, $2::int) AS n
     RETURNING id, install_id`,
    [requiredEnv("OAUTH_CLIENT_ID"), COUNT],
  );
  await sql(
    `INSERT INTO token_grants (id, install_row_id, access_token_encrypted, refresh_token_encrypted, access_token_expires_at, refresh_token_expires_at, scope, updated_at)
     SELECT gen_random_uuid(), id, 'placeholder', 'placeholder', now() + interval '1 hour', now() + interval '30 days', 'charge-points:read', now() FROM installs`,
  );
  const byInstallId = Object.fromEntries(rows.map((r) => [r.install_id, r.id]));
  // The newest install has a long slug, to see how it wraps on a phone.
  await sql("UPDATE installs SET slug = $1 WHERE install_id = 1", [LONG_SLUG]);
  // Install 7's last sync failed (lib/sync writes one run per resource; the sync stops at the failure).
  await sql(
    `INSERT INTO sync_runs (id, install_row_id, resource, started_at, outcome) VALUES
       (gen_random_uuid(), $1, 'teams', now() - interval '3 minutes', 'completed'),
       (gen_random_uuid(), $1, 'charge_points', now() - interval '3 minutes', 'failed')`,
    [byInstallId[7]],
  );
  await recordLatestFromRuns([byInstallId[7]!]);
  // Each history table's last purge (lib/retention/purge.ts), for the list's "last purge" line: six
  // tables, one of them not finished, must wrap on a phone like the rest.
  await sql(
    `INSERT INTO retention_purges (table_name, started_at, finished_at, cutoff, deleted_rows, batches, outcome)
     SELECT t, now() - interval '3 minutes', now() - interval '1 minute', now() - interval '14 days', 123456, 25, CASE WHEN t = 'sync_runs' THEN 'more' ELSE 'done' END
     FROM unnest($1::text[]) AS t`,
    [PURGED_TABLES],
  );
  return byInstallId;
}

const PURGED_TABLES = ["sync_runs", "refresh_attempts", "webhook_deliveries", "install_events", "staff_actions", "alert_digests"];

const installRows = (page: Page) => page.getByTestId("installs").locator("tr[data-install-row]");

async function expectNoSidewaysScroll(page: Page) {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

test("staff search, filter and page through the installs, on a desktop screen and on a phone", async ({ page }) => {
  // Two widths, several pages, and axe's checks on each.
  test.setTimeout(scaled(120_000));
  const installs = await seedInstalls();
  await signInAsStaff(page);

  for (const viewport of [
    { name: "desktop", width: 1280, height: 800 },
    { name: "phone", width: 390, height: 844 },
  ]) {
    await page.setViewportSize(viewport);
    await page.goto("/admin");
    await expect(page.getByTestId("count-total")).toHaveText(String(COUNT));
    await expect(page.getByTestId("install-range")).toHaveText(`1–25 of ${COUNT}`);
    await expect(installRows(page)).toHaveCount(25);
    await expect(page.getByTestId("retention-line").locator("[data-purge-table]")).toHaveCount(PURGED_TABLES.length);
    await expect(page.getByTestId("retention-line")).toContainText("not finished: the next run goes on");
    await expectNoSidewaysScroll(page);
    // A slug too long for its column wraps after a hyphen, never inside a word.
    for (const pair of await lineBreaks(page, `[data-install-row="${installs[1]}"] [data-testid="install-slug"]`)) expect(pair, `${viewport.name}: "${LONG_SLUG}" broke inside a word`).toMatch(/^-/);
    await expectAccessible(page, `the install list (${viewport.name})`, [viewport]);
    await page.screenshot({ path: `.data/test/screenshots/console-list-${viewport.name}.png`, fullPage: true });

    // Search: a name fragment, in any case, finds the one install.
    await page.getByLabel("Search").fill("depot OPERATOR 42");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page).toHaveURL(/[?&]q=depot\+OPERATOR\+42/);
    await expect(installRows(page)).toHaveCount(1);
    await expect(page.locator(`[data-install-row="${installs[42]}"]`)).toContainText("Depot Operator 42");
    await expect(page.getByTestId("count-matching")).toHaveText("1");

    // A filter: the install whose last sync failed, and nothing else.
    await page.getByRole("link", { name: "Clear", exact: true }).click();
    await expect(page).toHaveURL(/\/admin$/);
    await page.locator('select[name="sync"]').selectOption("failing");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page).toHaveURL(/[?&]sync=failing/);
    await expect(installRows(page)).toHaveCount(1);
    await expect(page.locator(`[data-install-row="${installs[7]}"]`)).toContainText("Failing");
    await expectNoSidewaysScroll(page);
    await expectAccessible(page, `the install list, filtered (${viewport.name})`, [viewport]);
    await page.screenshot({ path: `.data/test/screenshots/console-list-${viewport.name}-failing.png`, fullPage: true });

    // A filter nothing matches: the empty state, with a way back.
    await page.locator('select[name="state"]').selectOption("REVOKED");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page.getByTestId("installs-no-match")).toContainText("No install matches");
    await expectAccessible(page, `the install list, nothing matching (${viewport.name})`, [viewport]);

    // Pages: the next 25, then 100 per page (all of them on one page).
    await page.goto("/admin");
    await page.getByRole("link", { name: "Next →" }).click();
    await expect(page).toHaveURL(/[?&]page=1/);
    await expect(page.getByTestId("install-range")).toHaveText(`26–50 of ${COUNT}`);
    // Newest first: install n was made n minutes ago, so page 2 starts at install 26.
    await expect(installRows(page).first()).toHaveAttribute("data-install-row", installs[26]!);
    // The last page and the first are one step away from anywhere.
    await page.getByRole("link", { name: "Last »" }).click();
    await expect(page.getByTestId("install-range")).toHaveText(`51–60 of ${COUNT}`);
    await expect(page.getByRole("link", { name: "Last »" })).toHaveCount(0);
    await expect(page.getByRole("link", { name: "Next →" })).toHaveCount(0);
    await page.getByRole("link", { name: "« First" }).click();
    await expect(page.getByTestId("install-range")).toHaveText(`1–25 of ${COUNT}`);
    await expect(page.getByRole("link", { name: "« First" })).toHaveCount(0);
    await page.getByRole("link", { name: "Next →" }).click();
    await page.getByRole("link", { name: "100", exact: true }).click();
    await expect(installRows(page)).toHaveCount(COUNT);
    await expectNoSidewaysScroll(page);
  }
});

test("with no installs yet, the list says so", async ({ page }) => {
  await signInAsStaff(page);
  await expect(page.getByTestId("count-total")).toHaveText("0");
  await expect(page.getByTestId("installs-empty")).toContainText("No installs yet");
  await expect(page.getByRole("search")).toHaveCount(0);
  await expectAccessible(page, "the empty install list");
});
