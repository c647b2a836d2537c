// Helpers the end-to-end specs share: the stack's settings, the sandbox's operators, a staff
// sign-in through the console's form, as a person does it, and the accessibility check every page
// walk runs.
import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";
import { resultOf, runAppWorker } from "./app-process";
import { control, stack } from "./stack";

/** A setting of the stack `npm test` starts (scripts/test.ts passes them in the environment). */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the end-to-end tests through \`npm test\``);
  return value;
}

export type Operator = { id: number; name: string; chargePointCount: number };

/** The sandbox's seeded operators, in the portal's order. */
export async function operators(): Promise<Operator[]> {
  return (await control<{ operators: Operator[] }>("GET", "/operators")).operators;
}

/** Signs in to the staff console with the local account `npm run dev` and `npm test` create. */
export async function signInAsStaff(page: Page): Promise<void> {
  await page.goto("/admin/sign-in");
  await page.getByLabel("Email").fill(requiredEnv("STAFF_DEV_EMAIL"));
  await page.getByLabel("Password").fill(requiredEnv("STAFF_DEV_PASSWORD"));
  await page.getByRole("button", { name: "Sign in" }).click();
  // next-auth's signIn() runs in the page (fetch, then router.replace): without its scripts the form
  // would be submitted natively, as a GET to the sign-in page with the password in the address.
  await expect(page).toHaveURL(`${stack.appUrl}/admin`);
  await expect(page.getByTestId("staff-email")).toHaveText(requiredEnv("STAFF_DEV_EMAIL"));
}

/** The operator's side of an install, as a person clicks it: portal → the operator → Connect → Approve. */
export async function approveInPortal(page: Page, operator: Operator): Promise<void> {
  await page.goto(`${stack.sandboxUrl}/portal`);
  await page.getByRole("link", { name: operator.name }).click();
  await page.getByRole("button", { name: "Connect" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
}

/** A complete install for the first operator, landing on the app's dashboard, connected. */
export async function installAsFirstOperator(page: Page): Promise<void> {
  const [operator] = await operators();
  await approveInPortal(page, operator!);
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await expect(page.getByTestId("install-status")).toHaveText("Connected");
}

/** The install id the dashboard shows, read where the operator finds it: "Settings and access", through the nav. */
export async function shownInstallId(page: Page): Promise<string> {
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Settings and access" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard/settings`);
  return (await page.getByTestId("install-id").textContent()) ?? "";
}

/** A desktop screen and a phone's, the two widths every page is checked at. */
export const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/**
 * axe-core's checks (every rule it has: WCAG 2.x A and AA, and its best practices) on the page as it
 * is now, at each width given (both by default; the page is not reloaded, only laid out again), and
 * no violation whose impact is "serious" or "critical" may be found. Lesser findings ("moderate",
 * "minor") are not failures: they are judgement calls axe itself marks as such. The viewport is put
 * back as it was.
 */
export async function expectAccessible(page: Page, what: string, widths: readonly { width: number; height: number }[] = WIDTHS): Promise<void> {
  const before = page.viewportSize();
  for (const size of widths) {
    if (before?.width !== size.width || before.height !== size.height) await page.setViewportSize(size);
    const { violations } = await new AxeBuilder({ page }).analyze();
    const blocking = violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length}× e.g. ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")})`);
    expect(blocking, `axe on ${what} at ${size.width} px`).toEqual([]);
  }
  if (before) await page.setViewportSize(before);
}

/** What the scheduled sync does every few minutes; the test stack runs no worker, so a test runs one pass. */
export async function syncNow(installRowId: string): Promise<{ outcome: string; resources: { resource: string; outcome: string; reason: string | null }[] }> {
  return resultOf(await runAppWorker(["sync", installRowId, "100"]));
}

const SCREENSHOTS = `${process.env.TEST_DATA_DIR ?? ".data/test"}/screenshots`;

/** axe's checks, then screenshots at 1280 and 390 px; on the phone the page itself never scrolls sideways. */
export async function checkAndScreenshot(page: Page, name: string): Promise<void> {
  await expectAccessible(page, name);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: `${SCREENSHOTS}/${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  // Polled: a chart sizes itself to its container after the resize (a ResizeObserver), not at once.
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: `${SCREENSHOTS}/${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}
