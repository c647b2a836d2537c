// reauth_url only to the service (contract §7; lib/partner-api/service-origins.ts): a NEEDS_REAUTH answer whose
// reauth_url points elsewhere (the sandbox plays it with POST /_sandbox/reauth-url-origin) flags the install as
// usual, but the app keeps no link: the banner shows the state without a button, and a warning is logged with
// the URL's origin only. The service's own reauth_url is still followed.
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, control, installViaPortal, resetWorld, sql, stack } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

const FOREIGN_ORIGIN = "https://reauth.attacker.example";
const BUTTON = "Review and approve";

async function dashboard(sessionCookie: string): Promise<string> {
  const response = await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: sessionCookie } });
  expect(response.status).toBe(200);
  return response.text();
}

async function stored(installId: number) {
  const [row] = await sql<{ status: string; reauth_url: string | null }>("SELECT status, reauth_url FROM installs WHERE install_id = $1", [installId]);
  return row;
}

const appLog = () => path.join(process.env.TEST_LOG_DIR!, "app.log");

/** Where the app's log ends now: the log file is appended to by every run, so tests read only what follows. */
async function logOffset(): Promise<number> {
  return (await stat(appLog())).size;
}

/** The app's log lines (pino JSON) since `offset` that mention `text`, waiting a little for them to be written. */
async function appLogLines(offset: number, text: string): Promise<Record<string, unknown>[]> {
  let lines: string[] = [];
  for (let attempt = 0; attempt < 20 && lines.length === 0; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    lines = (await readFile(appLog())).subarray(offset).toString("utf8").split("\n").filter((line) => line.includes(text));
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("reauth_url only to the service", () => {
  it("the service's own reauth_url: the banner's button leads there", async () => {
    const install = await installViaPortal(1001);
    await control("POST", `/installs/${install.installId}/flag-reauth`);
    const html = await dashboard(install.sessionCookie);
    expect(html).toContain('data-testid="reauth-banner"');
    expect(html).toContain(BUTTON);
    expect(await stored(install.installId)).toEqual({ status: "NEEDS_REAUTH", reauth_url: `${stack.sandboxUrl}/portal/reauth/${install.installId}` });
  });

  it("a reauth_url at another origin: flagged, no link kept, no button, a warning with the origin only", async () => {
    await control("POST", "/reauth-url-origin", { origin: FOREIGN_ORIGIN });
    const offset = await logOffset();
    const install = await installViaPortal(1001);
    await control("POST", `/installs/${install.installId}/flag-reauth`);

    const html = await dashboard(install.sessionCookie);
    expect(html).toContain('data-testid="reauth-banner"');
    expect(html).toContain("Open the app in your operator portal to review and approve the new access.");
    expect(html).not.toContain(BUTTON);
    expect(html).not.toContain("attacker.example");
    expect(await stored(install.installId)).toEqual({ status: "NEEDS_REAUTH", reauth_url: null });

    const [line, ...more] = await appLogLines(offset, "reauth_url outside the service's origins");
    expect(more).toEqual([]); // once: after the flag, the app stops calling the API for this install
    expect(line).toMatchObject({ level: 40, installId: install.installId, reauthUrlOrigin: FOREIGN_ORIGIN });
    expect(JSON.stringify(line)).not.toContain("/portal/reauth/");

    // Page views after that make no more API calls, and no more log lines.
    await dashboard(install.sessionCookie);
    expect(await appLogLines(offset, "reauth_url outside the service's origins")).toHaveLength(1);
  });

  it("a foreign reauth_url stored earlier (before this check, or before REAUTH_URL_ORIGINS changed) gets no button either", async () => {
    const install = await installViaPortal(1001);
    // Flagged just now (the flag counts as the app's latest look, so the visit does not probe it).
    await sql("UPDATE installs SET status = 'NEEDS_REAUTH', last_reconciled_at = now(), reauth_url = $2 WHERE install_id = $1", [
      install.installId,
      `${FOREIGN_ORIGIN}/portal/reauth/${install.installId}`,
    ]);
    const html = await dashboard(install.sessionCookie);
    expect(html).toContain('data-testid="reauth-banner"');
    expect(html).not.toContain(BUTTON);
  });
});
