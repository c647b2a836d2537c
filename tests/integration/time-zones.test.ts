// Time zones that Intl accepts but PostgreSQL reads otherwise (issue 34; lib/i18n/database-zones.ts): the dashboard
// draws its days with Intl and the Overview buckets them in SQL (AT TIME ZONE), so a zone is used only when both read
// it alike. "AET" (ICU's old id for Sydney) is unknown to PostgreSQL: the Overview's query would fail. "CET" is a
// fixed UTC+1 to PostgreSQL (an abbreviation first) and Brussels' rules with summer time to Intl: the days would shift.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, installViaPortal, operatorRecords, resetWorld, sql, stack } from "../helpers/stack";

const { acceptedTimeZones } = await import("@/lib/i18n/database-zones");
const { loadOverview, parseRangeQuery } = await import("@/lib/dashboard/overview");
const { syncInstall } = await import("@/lib/sync");

beforeEach(resetWorld);
afterAll(closeSql);

const ALPENSTROM = 1003; // its seed has sessions at 22:31 and 22:36 UTC in April: the next day in Brussels, not at UTC+1

async function installed(operatorId: number) {
  const install = await installViaPortal(operatorId);
  expect((await syncInstall(install.installRowId, { perPage: 100 })).outcome).toBe("completed");
  const [row] = await sql<{ config: unknown; granted_scopes: string[] }>("SELECT config, granted_scopes FROM installs WHERE id = $1", [install.installRowId]);
  return { ...install, config: row!.config, grantedScopes: row!.granted_scopes };
}

const page = async (path: string, cookie: string) => {
  const response = await fetch(`${stack.appUrl}${path}`, { headers: { cookie } });
  return { status: response.status, html: await response.text() };
};

describe("zones Intl accepts and PostgreSQL reads otherwise", () => {
  it("are refused; zones both read alike, and UTC, are accepted", async () => {
    const accepted = await acceptedTimeZones(["AET", "US/Pacific-New", "CET", "Europe/Brussels", "Europe/Oslo", "UTC", "Europe/Atlantis", null]);
    expect([...accepted].sort()).toEqual(["Europe/Brussels", "Europe/Oslo", "UTC"]);
  });

  it("an already stored choice of one breaks nothing: the Overview renders, in the next zone in the order (here the browser's, then UTC)", async () => {
    const install = await installed(ALPENSTROM);
    for (const zone of ["AET", "CET"]) {
      const cookie = `${install.sessionCookie}; dashboard-zone=${encodeURIComponent(zone)}`;
      // The page streams (200 at once); what counts is whether the Overview rendered or its error boundary did.
      const overview = await page("/dashboard", cookie);
      expect(overview.status, zone).toBe(200);
      expect(overview.html, zone).toContain('data-testid="overview"');
      expect(overview.html, zone).toContain('data-testid="overview-range"');
      expect((await page("/dashboard/settings", cookie)).html, zone).toContain('data-time-zone="UTC"');
      const withBrowser = `${cookie}; browser-zone=${encodeURIComponent("Europe/Brussels")}`;
      expect((await page("/dashboard/settings", withBrowser)).html, zone).toContain('data-time-zone="Europe/Brussels"');
    }
    // A browser that reports one is ignored the same way.
    expect((await page("/dashboard/settings", `${install.sessionCookie}; browser-zone=CET`)).html).toContain('data-time-zone="UTC"');
    // The form does not offer them.
    const settings = (await page("/dashboard/settings", install.sessionCookie)).html;
    expect(settings).toContain('<option value="Europe/Brussels">');
    expect(settings).not.toContain('<option value="CET">');
  });

  it("why: with CET the Overview's days are PostgreSQL's UTC+1, not the Brussels days Intl draws; with Europe/Brussels they agree", async () => {
    const install = await installed(ALPENSTROM);
    const charges = (await operatorRecords<{ startedAt: string }>(ALPENSTROM, "charges")).data;
    const intlDays = (zone: string) => {
      const days = new Map<string, number>();
      for (const charge of charges) {
        const day = new Date(charge.startedAt).toLocaleDateString("en-CA", { timeZone: zone });
        if (day.startsWith("2025-")) days.set(day, (days.get(day) ?? 0) + 1);
      }
      return Object.fromEntries([...days].sort());
    };
    const overviewDays = async (zone: string) => {
      const overview = await loadOverview({ id: install.installRowId, config: install.config, grantedScopes: install.grantedScopes }, parseRangeQuery({ from: "2025-01-01", to: "2025-12-31" }), new Date(), zone);
      return Object.fromEntries(overview.days.filter((d) => d.sessions > 0).map((d) => [d.day, d.sessions]));
    };
    expect(await overviewDays("Europe/Brussels")).toEqual(intlDays("Europe/Brussels"));
    expect(await overviewDays("CET")).not.toEqual(intlDays("CET"));
  });
});
