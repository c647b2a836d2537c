// Every dashboard page, for two operators, at a desktop and a phone width (issue 13's walk): each
// operator installs the app in their own browser, the sync copies both operators' data, and then
// every section (and a detail page of each kind) shows that operator's name and data, never a
// name of the other's, and never scrolls sideways. The screenshots are attached to the results
// (the HTML report, and the test's output folder), for a person to look at.
import { expect, test, type Browser, type Page, type TestInfo } from "@playwright/test";
import { approveInPortal, operators, requiredEnv, type Operator } from "../helpers/e2e";
import { closeSql, operatorRecords, resetWorld, stack } from "../helpers/stack";
import { DASHBOARD_SECTIONS } from "../../app/dashboard/sections";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

// Two seeded operators (sandbox/seed.ts) with different charge points, sessions and teams.
const OPERATOR_IDS = [1001, 1002] as const;

type Known = { operator: Operator; chargePointNames: string[]; teamNames: string[]; chargePointId: number; chargeId: number };

async function known(operator: Operator): Promise<Known> {
  const [points, teams, charges] = await Promise.all([
    operatorRecords<{ id: number; name: string | null }>(operator.id, "charge-points"),
    operatorRecords<{ id: number; name: string | null }>(operator.id, "teams"),
    operatorRecords<{ id: number }>(operator.id, "charges"),
  ]);
  return {
    operator,
    chargePointNames: points.data.map((p) => p.name).filter((n): n is string => Boolean(n)),
    teamNames: teams.data.map((t) => t.name).filter((n): n is string => Boolean(n)),
    chargePointId: points.data[0]!.id,
    chargeId: charges.data[0]!.id,
  };
}

async function signedInPage(browser: Browser, operator: Operator): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await approveInPortal(page, operator);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  return page;
}

async function attachScreenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const file = testInfo.outputPath(name);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: "image/png" });
}

test("every dashboard page, for two operators, at 1280 and 390 px: each sees only their own data", async ({ browser }, testInfo) => {
  test.setTimeout(120_000);
  const seeded = await operators();
  const [a, b] = await Promise.all(OPERATOR_IDS.map((id) => known(seeded.find((o) => o.id === id)!)));
  const pages = new Map<number, Page>();
  for (const k of [a!, b!]) pages.set(k.operator.id, await signedInPage(browser, k.operator));

  // One run of the sync for every install, as a platform scheduler starts it (/api/cron/sync, app/api/cron/[job]).
  const response = await fetch(`${stack.appUrl}/api/cron/sync`, { method: "POST", headers: { Authorization: `Bearer ${requiredEnv("CRON_SECRET")}` } });
  expect(response.status).toBe(200);

  for (const [self, other] of [
    [a!, b!],
    [b!, a!],
  ] as const) {
    const page = pages.get(self.operator.id)!;
    // The other operator's names that are not also this operator's: none may appear on any page.
    const foreign = [other.operator.name, ...other.chargePointNames, ...other.teamNames].filter(
      (name) => name !== self.operator.name && !self.chargePointNames.includes(name) && !self.teamNames.includes(name),
    );
    // What the two core sections must show of this operator's own data; any other section of the
    // registry (app/dashboard/sections.ts) is walked too, and must render under its own nav link
    // without its error state (its own tests, in its folder, check what it shows).
    const contentOf: Record<string, (page: Page) => Promise<void>> = {
      "/dashboard/charge-points": (p) => expect(p.getByTestId("charge-points")).toContainText(self.chargePointNames[0]!),
      "/dashboard/sessions": (p) => expect(p.getByTestId("session-count")).toBeVisible(),
    };
    const sections: { path: string; name: string; shows: (page: Page) => Promise<void> }[] = [
      { path: "/dashboard?from=2025-01-01&to=2025-12-31", name: "overview", shows: (p) => expect(p.getByTestId("overview-as-of")).toBeVisible() },
      ...DASHBOARD_SECTIONS.map(({ href, label }) => ({
        path: href,
        name: href.slice("/dashboard/".length),
        shows: async (p: Page) => {
          await expect(p.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: label })).toHaveAttribute("aria-current", "page");
          // A section's error boundary (app/dashboard/_components/section-error.tsx) says this.
          await expect(p.getByText(/could not be shown/)).toHaveCount(0);
          await contentOf[href]?.(p);
        },
      })),
      { path: `/dashboard/charge-points/${self.chargePointId}`, name: "charge-point", shows: (p) => expect(p.getByTestId("charge-point-detail")).toBeVisible() },
      { path: `/dashboard/sessions/${self.chargeId}`, name: "session", shows: (p) => expect(p.getByTestId("session-detail")).toBeVisible() },
    ];
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      for (const section of sections) {
        await page.goto(section.path);
        await expect(page.getByTestId("operator-name")).toHaveText(self.operator.name);
        await section.shows(page);
        const text = await page.locator("body").innerText();
        for (const name of foreign) expect(text, `${section.path} for ${self.operator.name} shows "${name}"`).not.toContain(name);
        const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
        expect(scrollWidth, `${section.path} scrolls sideways at ${width} px`).toBeLessThanOrEqual(clientWidth);
        await attachScreenshot(page, testInfo, `${self.operator.id}-${section.name}-${width}.png`);
      }
    }
  }
});
