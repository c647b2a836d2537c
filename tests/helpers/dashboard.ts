// What a dashboard section's own integration tests share (app/dashboard/<section>/_tests/): an install
// granted the scopes a test needs, a page fetched with the operator's session, the API calls the
// sandbox saw. (Their Playwright tests share `syncNow` and `checkAndScreenshot` in ./e2e.ts.) A
// section's tests import these rather than each other's, so removing one section's folder leaves the
// others whole.
import { sectionListing } from "../../app/dashboard/sections";
import { control, installViaPortal, sandboxEvents, stack } from "./stack";

/**
 * The Sessions section's page, while the dashboard has one (app/dashboard/sections.ts: a fork may
 * remove it). The core's tests and the bench reach it only through this, so that they need no edit then.
 */
export const SESSIONS_PAGE: string | undefined = sectionListing("charges")?.href;

/**
 * An install of `operatorId` granted `scopes` (registered before it exists, so nothing is flagged),
 * its local copy made by one sync in this process unless `sync` is false.
 */
export async function installWithScopes(operatorId: number, scopes: string[], options: { sync?: boolean } = {}) {
  await control("POST", "/app/scopes", { scopes });
  const install = await installViaPortal(operatorId);
  if (options.sync ?? true) {
    const { syncInstall } = await import("@/lib/sync");
    await syncInstall(install.installRowId, { perPage: 100 });
  }
  return install;
}

/** A dashboard page as the signed-in operator gets it. */
export async function dashboardPage(path: string, sessionCookie: string): Promise<{ status: number; html: string }> {
  const response = await fetch(`${stack.appUrl}${path}`, { headers: { cookie: sessionCookie } });
  return { status: response.status, html: await response.text() };
}

/** API calls the sandbox saw for the install whose path matches. */
export async function apiCallsOf(installId: number, pattern: RegExp) {
  return (await sandboxEvents("api")).filter((e) => e.detail.install_id === installId && pattern.test(String(e.detail.path)));
}
