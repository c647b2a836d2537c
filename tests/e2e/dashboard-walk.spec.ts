// Every dashboard page, for two operators, at a desktop and a phone width (issue 13's walk): each
// operator installs the app in their own browser, the sync copies both operators' data, and then
// every section (and a detail page of each kind) shows that operator's name and data, never a
// name of the other's, and never scrolls sideways. Every page passes axe's checks (0 serious, 0
// critical) at both widths, in the light theme and in the dark one. The screenshots are attached to
// the results (the HTML report, and the test's output folder), for a person to look at.
import { expect, test, type Browser, type Page, type TestInfo } from "@playwright/test";
import { WIDTHS, approveInPortal, expectAccessible, operators, requiredEnv, type Operator } from "../helpers/e2e";
import { closeSql, operatorRecords, resetWorld, stack } from "../helpers/stack";
import { DASHBOARD_SECTIONS, sectionLabel } from "../../app/dashboard/sections";
import { translator } from "../../lib/i18n/messages";
import { SESSIONS_PAGE } from "../helpers/dashboard";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

// Two seeded operators (sandbox/seed.ts) with different charge points, sessions and teams.
const OPERATOR_IDS = [1001, 1002] as const;
/**
 * The language each one sees without choosing (docs/spec-gaps.md A151): Fjordline's charge points are
 * all in Norway, so its dashboard is Norwegian; Northwind's (the Netherlands) name no listed country,
 * and this browser asks for English.
 */
const LANGUAGE = { 1001: "en", 1002: "nb" } as const;

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

const sessions = SESSIONS_PAGE;

test("every dashboard page, for two operators, at 1280 and 390 px: each sees only their own data", async ({ browser }, testInfo) => {
  // Two operators, eight pages, two widths, and axe on each for the first operator in both themes.
  test.setTimeout(480_000);
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
    const t = translator(LANGUAGE[self.operator.id as keyof typeof LANGUAGE]);
    // The other operator's names that are not also this operator's: none may appear on any page.
    const foreign = [other.operator.name, ...other.chargePointNames, ...other.teamNames].filter(
      (name) => name !== self.operator.name && !self.chargePointNames.includes(name) && !self.teamNames.includes(name),
    );
    // What the two core sections must show of this operator's own data; any other section of the
    // registry (app/dashboard/sections.ts) is walked too, and must render under its own nav link
    // without its error state (its own tests, in its folder, check what it shows).
    const contentOf: Record<string, (page: Page) => Promise<void>> = {
      ...(sessions ? { [sessions]: (p: Page) => expect(p.getByTestId("session-count")).toBeVisible() } : {}),
      "/dashboard/charge-points": (p) => expect(p.getByTestId("charge-points")).toContainText(self.chargePointNames[0]!),
      "/dashboard/settings": (p) => expect(p.getByTestId("install-config")).toBeVisible(),
    };
    const sections: { path: string; name: string; shows: (page: Page) => Promise<void> }[] = [
      { path: "/dashboard?from=2025-01-01&to=2025-12-31", name: "overview", shows: (p) => expect(p.getByTestId("overview-as-of")).toBeVisible() },
      ...DASHBOARD_SECTIONS.map((section) => ({
        path: section.href,
        name: section.href.slice("/dashboard/".length),
        shows: async (p: Page) => {
          await expect(p.getByRole("navigation", { name: t("nav.label") }).getByRole("link", { name: sectionLabel(section, t) })).toHaveAttribute("aria-current", "page");
          // A section's error boundary (app/dashboard/_components/section-error.tsx) says this, in either language.
          await expect(p.getByText(/could not be shown|Kunne ikke vise/)).toHaveCount(0);
          await contentOf[section.href]?.(p);
        },
      })),
      { path: `/dashboard/charge-points/${self.chargePointId}`, name: "charge-point", shows: (p) => expect(p.getByTestId("charge-point-detail")).toBeVisible() },
      ...(sessions ? [{ path: `${sessions}/${self.chargeId}`, name: "session", shows: (p: Page) => expect(p.getByTestId("session-detail")).toBeVisible() }] : []),
    ];
    const titles = new Set<string>();
    for (const { width, height } of WIDTHS) {
      await page.setViewportSize({ width, height });
      for (const section of sections) {
        await page.goto(section.path);
        // Each page kind names itself in the title (app/layout.tsx's template): one title per kind.
        titles.add(await page.title());
        await expect(page.getByTestId("operator-name")).toHaveText(self.operator.name);
        await section.shows(page);
        const text = await page.locator("body").innerText();
        for (const name of foreign) expect(text, `${section.path} for ${self.operator.name} shows "${name}"`).not.toContain(name);
        const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
        expect(scrollWidth, `${section.path} scrolls sideways at ${width} px`).toBeLessThanOrEqual(clientWidth);
        // The pages are the same for both operators: axe checks them once, for the first.
        if (self === a) await expectAccessible(page, `${section.path} (light)`, [{ width, height }]);
        await attachScreenshot(page, testInfo, `${self.operator.id}-${section.name}-${width}.png`);
      }
    }
    expect(titles.size, [...titles].join(" / ")).toBe(sections.length);
  }

  // The dark theme (the system's setting, prefers-color-scheme): every page again, both widths.
  const page = pages.get(a!.operator.id)!;
  const lightBackground = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.emulateMedia({ colorScheme: "dark" });
  for (const path of ["/dashboard?from=2025-01-01&to=2025-12-31", ...DASHBOARD_SECTIONS.map((s) => s.href), `/dashboard/charge-points/${a!.chargePointId}`, ...(sessions ? [`${sessions}/${a!.chargeId}`] : [])]) {
    await page.goto(path);
    await expect(page.getByTestId("operator-name")).toHaveText(a!.operator.name);
    // The page is dark: its background is not the light theme's.
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe(lightBackground);
    for (const { width, height } of WIDTHS) {
      await page.setViewportSize({ width, height });
      await expectAccessible(page, `${path} (dark)`, [{ width, height }]);
      await attachScreenshot(page, testInfo, `dark-${path.split("?")[0]!.replaceAll("/", "_")}-${width}.png`);
    }
  }
});

test("on a 390 px phone every section is in sight in the nav and a tap away, and the page's own content starts on the first screen", async ({ page }, testInfo) => {
  const [operator] = await operators();
  await page.setViewportSize({ width: 390, height: 844 });
  await approveInPortal(page, operator!);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);

  const nav = page.getByRole("navigation", { name: "Dashboard" });
  for (const { href, label } of [{ href: "/dashboard", label: "Overview" }, ...DASHBOARD_SECTIONS]) {
    const link = nav.getByRole("link", { name: label, exact: true });
    // Wholly inside the screen, with no sideways swipe: a link cut at the edge is not "in sight".
    const box = (await link.boundingBox())!;
    expect(box.x, `${label} starts on the screen`).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, `${label} ends on the screen`).toBeLessThanOrEqual(390);
    await link.click();
    await expect(page).toHaveURL(`${stack.appUrl}${href}`);
    await expect(nav.getByRole("link", { name: label, exact: true })).toHaveAttribute("aria-current", "page");
    // The header (name, state, sign out) and the nav leave most of the first screen to the page.
    const navBottom = (await nav.boundingBox())!;
    expect(navBottom.y + navBottom.height, `the nav ends high on ${href}`).toBeLessThan(300);
    const file = testInfo.outputPath(`phone-${label.replaceAll(" ", "-").toLowerCase()}.png`);
    await page.screenshot({ path: file });
    await testInfo.attach(file.split("/").pop()!, { path: file, contentType: "image/png" });
  }
});

test("an unknown address gets the app's own 404, in its header, with the ways home; the app has an icon", async ({ page }) => {
  const response = await page.goto("/no-such-page");
  expect(response?.status()).toBe(404);
  await expect(page.getByTestId("not-found")).toContainText("This page does not exist");
  await expect(page).toHaveTitle(/^Page not found · /);
  await page.getByTestId("not-found").getByRole("link", { name: "Home" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/`);
  await page.goBack();
  // The 404 page again, loaded and hydrated, before axe reads it: on a loaded machine the history
  // step can still be settling when goBack returns, and axe's read dies with the old document.
  await expect(page).toHaveURL(`${stack.appUrl}/no-such-page`);
  await expect(page.getByTestId("not-found")).toContainText("This page does not exist");
  await page.waitForLoadState("load");
  await expectAccessible(page, "the 404 page");

  // The icon the browser shows on the tab, declared in the page and served.
  const icon = await page.locator('link[rel="icon"]').first().getAttribute("href");
  expect(icon).toBeTruthy();
  const served = await page.request.get(icon!);
  expect(served.status()).toBe(200);
  expect(served.headers()["content-type"]).toContain("image/svg+xml");
});
