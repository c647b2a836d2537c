// The operator's language and time (lib/i18n): a Norwegian operator (Fjordline, whose charge points
// are all in Norway) sees the dashboard in Norwegian, its amounts as Norwegian kroner written the
// Norwegian way and its times in Oslo time with the zone named, without choosing anything; on
// "Settings and access" they can choose another language or zone, and the choice is refused when it
// is not a shipped language or a real zone, or when the caller is not signed in. An operator whose
// country says nothing (Northwind, in the Netherlands) gets what their browser asks for. Every page
// is checked by axe and photographed at 1280 and 390 px (checkAndScreenshot).
import { expect, test, type Page } from "@playwright/test";
import { approveInPortal, checkAndScreenshot, operators, requiredEnv } from "../helpers/e2e";
import { closeSql, resetWorld, stack } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

const NORTHWIND = 1001;
const FJORDLINE = 1002;
/** Norwegian digit groups and the "kr" after the amount are separated by no-break spaces. */
const NOK = /^\d{1,3}(?:[\s\u00a0]\d{3})*,\d{2}[\s\u00a0]kr$/;

async function installAndSync(page: Page, operatorId: number): Promise<void> {
  const operator = (await operators()).find((o) => o.id === operatorId)!;
  await approveInPortal(page, operator);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  const response = await fetch(`${stack.appUrl}/api/cron/sync`, { method: "POST", headers: { Authorization: `Bearer ${requiredEnv("CRON_SECRET")}` } });
  expect(response.status).toBe(200);
}

async function displayCookies(page: Page): Promise<string[]> {
  return (await page.context().cookies()).filter((c) => c.name === "dashboard-locale" || c.name === "dashboard-zone").map((c) => `${c.name}=${c.value}`);
}

test("a Norwegian operator sees Norwegian dates and money in Oslo time, and can choose otherwise", async ({ page }) => {
  test.setTimeout(scaled(120_000));
  await page.setViewportSize({ width: 1280, height: 800 });
  await installAndSync(page, FJORDLINE);

  // Nothing chosen: the charge points are all in Norway, so Norwegian and Oslo time (docs/spec-gaps.md A151).
  await page.goto("/dashboard?from=2025-01-01&to=2025-12-31");
  const nav = page.getByRole("navigation", { name: "Kontrollpanel" });
  await expect(nav.getByRole("link", { name: "Oversikt" })).toHaveAttribute("aria-current", "page");
  await expect(page.locator("[lang='nb-NO']").first()).toBeVisible();
  await expect(page.getByTestId("headline-revenue-value")).toHaveText(NOK);
  await expect(page.getByTestId("headline-sessions-value")).toHaveText("14");
  // The range in Norwegian dates, its days Oslo's; the copy's time in Oslo time, named by its zone.
  await expect(page.getByTestId("overview-range")).toHaveText("1. jan. 2025 til 31. des. 2025: 365 dager (Oslo-tid)");
  await expect(page.getByTestId("overview-as-of")).toContainText(/Ladepunkter per \d{1,2}\. \S+ \d{4}, \d{2}:\d{2} (CET|CEST)/);
  await expect(page.getByTestId("state-list")).toContainText("Ledig");
  await expect(page.getByTestId("revenue-list")).toContainText("ladeøkter");
  await checkAndScreenshot(page, "locale-nb-overview");

  // "Settings and access" says where the choice came from, and offers another.
  await nav.getByRole("link", { name: "Innstillinger og tilgang" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard/settings`);
  const current = page.getByTestId("display-current");
  await expect(current).toHaveAttribute("data-locale", "nb");
  await expect(current).toHaveAttribute("data-time-zone", "Europe/Oslo");
  await expect(current).toContainText("etter hvor ladepunktene dine står");
  // What the operator allowed, in words from the catalogue (lib/installs/scope-words.ts).
  await expect(page.getByTestId("granted-scopes")).toContainText("Lese ladepunktene dine");
  await checkAndScreenshot(page, "locale-nb-settings");

  // English, still in Oslo time: the choice is saved and every page follows it.
  await page.getByLabel("Språk").selectOption("en");
  await page.getByLabel("Tidssone").selectOption("Europe/Oslo");
  await page.getByRole("button", { name: "Lagre" }).click();
  await expect(page.getByTestId("display-outcome")).toHaveText("Saved. Dates and times are now shown in Oslo time.");
  await expect(current).toHaveAttribute("data-locale", "en");
  expect((await displayCookies(page)).sort()).toEqual(["dashboard-locale=en", expect.stringMatching(/^dashboard-zone=Europe(\/|%2F)Oslo$/)]);
  await page.goto("/dashboard?from=2025-01-01&to=2025-12-31");
  await expect(page.getByTestId("overview-range")).toHaveText("1 Jan 2025 to 31 Dec 2025: 365 days (Oslo time)");
  await expect(page.getByTestId("overview-as-of")).toContainText(/Charge points as of \d{1,2} \w{3} \d{4}, \d{2}:\d{2} (CET|CEST)/);

  // Back to Automatic: the choice is removed, and the country decides again.
  await page.goto("/dashboard/settings");
  await page.getByLabel("Language").selectOption("auto");
  await page.getByLabel("Time zone").selectOption("auto");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("display-outcome")).toHaveAttribute("data-outcome", "saved");
  await expect(current).toHaveAttribute("data-locale", "nb");
  expect(await displayCookies(page)).toEqual([]);
});

test("the language and zone setting refuses what is not a shipped language or a real zone, and a caller who is not signed in", async ({ page }) => {
  await installAndSync(page, FJORDLINE);
  await page.goto("/dashboard/settings");
  const form = page.getByTestId("display-form");

  // A forged option, as anyone can post: refused with the reason, nothing stored.
  for (const [field, value, outcome] of [
    ["locale", "sv", "bad-locale"],
    ["timeZone", "Europe/Atlantis", "bad-zone"],
  ] as const) {
    await form.locator(`select[name="${field}"]`).evaluate((select: HTMLSelectElement, forged) => {
      select.add(new Option(forged, forged));
      select.value = forged;
    }, value);
    await form.getByRole("button").click();
    await expect(page.getByTestId("display-outcome")).toHaveAttribute("data-outcome", outcome);
    expect(await displayCookies(page)).toEqual([]);
  }

  // The session ends (another tab signed out, it expired): the action checks its caller and stores nothing.
  await page.goto("/dashboard/settings");
  await form.locator('select[name="locale"]').selectOption("en");
  await page.context().clearCookies();
  await form.getByRole("button").click();
  // The action sent the caller to /dashboard (the browser may still draw the layout it had: reload it).
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  expect(await displayCookies(page)).toEqual([]);
  await page.reload();
  await expect(page.getByTestId("signed-out")).toBeVisible();
});

test("an operator whose charge points name no listed country gets their browser's language and zone", async ({ browser }) => {
  const context = await browser.newContext({ locale: "nb-NO", timezoneId: "Europe/Oslo", viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await installAndSync(page, NORTHWIND);
  await page.goto("/dashboard?from=2025-01-01&to=2025-12-31");
  // Accept-Language gives the words at once; the zone arrives with the page's script (a cookie) and
  // the page is drawn again in it.
  await expect(page.getByRole("navigation", { name: "Kontrollpanel" })).toBeVisible();
  await expect(page.getByTestId("overview-range")).toHaveText("1. jan. 2025 til 31. des. 2025: 365 dager (Oslo-tid)");
  await expect(page.getByTestId("headline-revenue-value")).toHaveText(/^\d{1,3}(?:[\s\u00a0]\d{3})*,\d{2}[\s\u00a0]€$/);
  await page.goto("/dashboard/settings");
  await expect(page.getByTestId("display-current")).toContainText("fra nettleseren din");
  await context.close();
});
