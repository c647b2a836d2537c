// The security headers in a real browser (proxy.ts, lib/http/security-headers.ts): with the nonce-based
// Content-Security-Policy, every page still hydrates and works (next-auth's client code for the staff sign-in,
// client-side navigation on the dashboard) and the browser reports no violation; and no page can be framed.
import { expect, test, type Browser, type Page } from "@playwright/test";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { installAsFirstOperator, signInAsStaff } from "../helpers/e2e";
import { PRODUCT } from "../helpers/product";

test.beforeEach(resetWorld);
test.afterAll(closeSql);

/**
 * Collects every CSP violation the browser reports on the app's pages, across navigations: the
 * `securitypolicyviolation` events (through a binding that survives page loads) and the console's
 * "Refused to …" errors.
 */
async function watchCspViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.exposeFunction("__reportCspViolation", (violation: string) => violations.push(violation));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      const report = (window as unknown as { __reportCspViolation: (v: string) => void }).__reportCspViolation;
      void report(`${location.href}: ${event.violatedDirective} blocked ${event.blockedURI || "inline"} at ${event.sourceFile}:${event.lineNumber}:${event.columnNumber}`);
    });
  });
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to (execute|load|apply|frame|connect)/.test(message.text())) violations.push(`console: ${message.text()}`);
  });
  return violations;
}

async function installAsOperator(browser: Browser): Promise<{ rowId: string; installId: number }> {
  const context = await browser.newContext();
  try {
    await installAsFirstOperator(await context.newPage());
  } finally {
    await context.close();
  }
  const [row] = await sql<{ id: string; install_id: number }>("SELECT id, install_id FROM installs");
  return { rowId: row!.id, installId: row!.install_id };
}

test("the staff sign-in, the console and sign-out run their scripts under the CSP, with no violation", async ({ page, browser }) => {
  await installAsOperator(browser);
  const violations = await watchCspViolations(page);
  await signInAsStaff(page);
  await page.getByTestId("install-link").first().click();
  await expect(page.getByTestId("detail-install-id")).toBeVisible();
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/admin/sign-in`);
  expect(violations).toEqual([]);
});

test("the operator's dashboard hydrates: links navigate in the page, with no violation", async ({ page }) => {
  const violations = await watchCspViolations(page);
  await installAsFirstOperator(page);
  await page.goto(`${stack.appUrl}/dashboard/charge-points`);
  // A marker in the page's JavaScript survives client-side navigation, not a full page load.
  await page.evaluate(() => ((window as unknown as { hydrationMarker: number }).hydrationMarker = 42));
  await page.getByRole("link", { name: "25", exact: true }).click();
  await expect(page).toHaveURL(/perPage=25/);
  await page.getByRole("link", { name: PRODUCT.displayName }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/`);
  await page.getByRole("link", { name: "Open your dashboard" }).click();
  await expect(page).toHaveURL(`${stack.appUrl}/dashboard`);
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Charge points" }).click();
  await expect(page.getByTestId("charge-points")).toBeVisible();
  expect(await page.evaluate(() => (window as unknown as { hydrationMarker?: number }).hydrationMarker)).toBe(42);
  expect(violations).toEqual([]);
});

test("no page of the app can be framed by another site", async ({ page }) => {
  // The sandbox's portal plays "another site" (it sends no CSP of its own).
  await page.goto(`${stack.sandboxUrl}/portal`);
  for (const path of ["/", "/admin/sign-in"]) {
    const loaded = page.evaluate(
      (src) =>
        new Promise<void>((resolve) => {
          const frame = document.createElement("iframe");
          frame.src = src;
          frame.onload = () => resolve();
          document.body.append(frame);
        }),
      `${stack.appUrl}${path}`,
    );
    await loaded;
    const framed = page.frames().find((frame) => frame !== page.mainFrame() && !frame.isDetached() && frame.url() !== "about:blank");
    // Chromium replaces a refused frame with its error page: the app's document never loads in it.
    expect(framed?.url(), path).toMatch(/^chrome-error:/);
    await page.evaluate(() => document.querySelectorAll("iframe").forEach((frame) => frame.remove()));
  }
});
