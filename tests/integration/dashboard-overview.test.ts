// The Overview (issue 13; lib/dashboard/overview.ts, app/dashboard/(overview)/page.tsx): figures from the
// install's local copy, checked against the sandbox's own records (its control API lists them as the
// API does); one install's data never in another's; the range in the URL, where nothing a visitor
// types gives a 500; and the page served from the copy while the service is down, with "as of".
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { armApiFault, clearApiFaults, closeSql, control, installViaPortal, operatorRecords, resetWorld, sql, stack } from "../helpers/stack";

const { loadOverview, parseRangeQuery } = await import("@/lib/dashboard/overview");
const { syncInstall } = await import("@/lib/sync");

beforeEach(resetWorld);
afterEach(clearApiFaults);
afterAll(closeSql);

const NORTHWIND = 1001; // EUR, 23 charge points, 36 charges (sandbox/seed.ts)
const FJORDLINE = 1002; // NOK, 7 charge points, 14 charges

type SandboxCharge = { id: number; startedAt: string; consumedKwh: number; price: number; currency: { identifier: string } };
type SandboxChargePoint = { id: number; state: string };

const sync = (installRowId: string) => syncInstall(installRowId, { perPage: 100 });

/** What the Overview reads of the install (lib/dashboard/overview.ts OverviewInstall), as stored. */
async function storedInstall(installRowId: string): Promise<{ id: string; config: unknown; grantedScopes: string[] }> {
  const [row] = await sql<{ config: unknown; granted_scopes: string[] }>("SELECT config, granted_scopes FROM installs WHERE id = $1", [installRowId]);
  return { id: installRowId, config: row!.config, grantedScopes: row!.granted_scopes };
}

/** The page's HTML as the server sent it, without the `<!-- -->` markers React puts between adjacent text nodes. */
async function overviewPage(sessionCookie: string, query = ""): Promise<{ status: number; html: string }> {
  const response = await fetch(`${stack.appUrl}/dashboard${query}`, { headers: { cookie: sessionCookie } });
  return { status: response.status, html: (await response.text()).replace(/<!-- -->/g, "") };
}

/** A headline figure's text as rendered. */
function headline(html: string, testId: string): string {
  const match = new RegExp(`data-testid="${testId}-value"[^>]*>(.*?)</p>`).exec(html);
  if (!match) throw new Error(`no ${testId} on the page`);
  return match[1]!;
}

/** One tile's HTML (the server's rendering, not the RSC payload that repeats it). */
function tileHtml(html: string, testId: string): string {
  const match = new RegExp(`data-testid="${testId}".*?</section>`).exec(html);
  if (!match) throw new Error(`no ${testId} on the page`);
  return match[0];
}

const dayOf = (iso: string) => iso.slice(0, 10);

describe("the figures, after a sync", () => {
  it("match the sandbox's own records: sessions, energy and revenue per day, charge points by state", async () => {
    const install = await installViaPortal(NORTHWIND);
    expect((await sync(install.installRowId)).outcome).toBe("completed");
    const charges = (await operatorRecords<SandboxCharge>(NORTHWIND, "charges")).data;
    const points = (await operatorRecords<SandboxChargePoint>(NORTHWIND, "charge-points")).data;
    expect(charges).toHaveLength(36);

    // The whole seed (2025) as a custom range: every session counted once, on its UTC day.
    const all = await loadOverview(await storedInstall(install.installRowId), parseRangeQuery({ from: "2025-01-01", to: "2025-12-31" }));
    expect(all.range).toEqual({ from: "2025-01-01", to: "2025-12-31", days: 365, ends: "custom" });
    expect(all.days).toHaveLength(365);
    expect(all.totals.sessions).toBe(36);
    const kwh = charges.reduce((n, c) => n + c.consumedKwh, 0);
    expect(all.totals.kwh).toBeCloseTo(kwh, 3);
    const perDay = new Map<string, number>();
    for (const c of charges) perDay.set(dayOf(c.startedAt), (perDay.get(dayOf(c.startedAt)) ?? 0) + 1);
    expect(Object.fromEntries(all.days.filter((d) => d.sessions > 0).map((d) => [d.day, d.sessions]))).toEqual(Object.fromEntries([...perDay].sort()));
    const revenue = charges.reduce((n, c) => n + Math.round(c.price * 100), 0) / 100;
    expect(all.revenue).toEqual([{ currency: "EUR", decimals: 2, amount: revenue, sessions: 36 }]);

    const byState = new Map<string, number>();
    for (const p of points) byState.set(p.state, (byState.get(p.state) ?? 0) + 1);
    expect(Object.fromEntries(all.states.map((s) => [s.state, s.count]))).toEqual(Object.fromEntries(byState));
    expect(all.chargePoints).toEqual({ total: 23, available: byState.get("available") ?? 0, inError: byState.get("error") ?? 0 });

    // The default range: 30 days ending on the newest session's UTC day, not on today's date.
    const latest = charges.map((c) => c.startedAt).sort().at(-1)!;
    const last30 = await loadOverview(await storedInstall(install.installRowId), parseRangeQuery({}));
    expect(last30.range).toMatchObject({ to: dayOf(latest), days: 30, ends: "latest-session" });
    const from = last30.range.from;
    const inRange = charges.filter((c) => dayOf(c.startedAt) >= from && dayOf(c.startedAt) <= dayOf(latest));
    expect(last30.totals.sessions).toBe(inRange.length);
    expect(last30.days[0]!.day).toBe(from);
    expect(last30.days.at(-1)!.day).toBe(dayOf(latest));

    // The page shows the same figures, the range's end, and "as of".
    const page = await overviewPage(install.sessionCookie, "?days=30");
    expect(page.status).toBe(200);
    expect(headline(page.html, "headline-sessions")).toBe(String(inRange.length));
    expect(headline(page.html, "headline-charge-points")).toBe("23");
    expect(page.html).toContain("30 days up to ");
    expect(page.html).toContain("the latest session");
    expect(page.html).toMatch(/Charge points as of \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC/);
    // Streamed: the skeleton (loading.tsx) comes first in the response, the figures after it.
    expect(page.html.indexOf('data-testid="overview-loading"')).toBeGreaterThan(0);
    expect(page.html.indexOf('data-testid="overview-loading"')).toBeLessThan(page.html.indexOf('data-testid="headline-sessions"'));
  });

  it("never include another install's data", async () => {
    const northwind = await installViaPortal(NORTHWIND);
    const fjordline = await installViaPortal(FJORDLINE);
    await sync(northwind.installRowId);
    await sync(fjordline.installRowId);
    const wholeSeed = parseRangeQuery({ from: "2025-01-01", to: "2025-12-31" });

    const mine = await loadOverview({ ...(await storedInstall(fjordline.installRowId)), config: null }, wholeSeed);
    expect(mine.totals.sessions).toBe(14);
    expect(mine.chargePoints.total).toBe(7);
    expect(mine.revenue.map((r) => r.currency)).toEqual(["NOK"]);

    const page = await overviewPage(fjordline.sessionCookie, "?from=2025-01-01&to=2025-12-31");
    expect(headline(page.html, "headline-sessions")).toBe("14");
    expect(page.html).toContain('data-currency="NOK"');
    expect(page.html).not.toContain('data-currency="EUR"');
  });
});

describe("the range in the URL", () => {
  it("reads presets and dates, and turns anything else into the default with a reason", () => {
    expect(parseRangeQuery({})).toEqual({ kind: "preset", days: 30 });
    expect(parseRangeQuery({ days: "7" })).toEqual({ kind: "preset", days: 7 });
    expect(parseRangeQuery({ days: ["90", "7"] })).toEqual({ kind: "preset", days: 90 });
    expect(parseRangeQuery({ from: "2025-02-01", to: "2025-02-28" })).toEqual({ kind: "custom", from: "2025-02-01", to: "2025-02-28" });
    for (const query of [
      { days: "31" },
      { days: "abc" },
      { days: "1e3" },
      { from: "2025-02-30", to: "2025-03-01" }, // no such day
      { from: "2025-03-01" }, // half a range
      { from: "2025-03-02", to: "2025-03-01" }, // backwards
      { from: "2020-01-01", to: "2025-01-01" }, // longer than a year
      { from: "'; DROP TABLE installs; --", to: "2025-01-01" },
    ]) {
      expect(parseRangeQuery(query), JSON.stringify(query)).toMatchObject({ kind: "default", days: 30, rejected: expect.any(String) });
    }
  });

  it("a bad query still gets the page (never a 500), which says what it showed instead", async () => {
    const install = await installViaPortal(NORTHWIND);
    await sync(install.installRowId);
    for (const query of ["?days=abc", "?from=2025-13-01&to=2025-13-02", "?from=x", `?from=${"9".repeat(5000)}&to=1`, "?days=7&from=2025-02-01"]) {
      const page = await overviewPage(install.sessionCookie, query);
      expect(page.status, query).toBe(200);
      expect(page.html, query).toContain('data-testid="range-rejected"');
      expect(page.html, query).toContain("Showing the last 30 days instead.");
    }
  });
});

describe("before the copy exists, and as configured", () => {
  it("says the data is being copied, how far it got, and links to the other sections", async () => {
    const install = await installViaPortal(NORTHWIND);
    const page = await overviewPage(install.sessionCookie);
    expect(page.status).toBe(200);
    expect(page.html).toContain("Your data is being copied from the service");
    expect(page.html).toMatch(/data-testid="copy-progress"[^>]*>The first copy has not started yet. 0 charge points and 0 sessions copied so far./);
    expect(page.html).toContain('href="/dashboard/charge-points"');
    expect(page.html).not.toContain('data-testid="headline-sessions"');
    // The page refreshes itself while the copy runs (a client component), and stops once it is complete.
    expect(page.html).toContain('data-testid="refresh-while-copying"');
    await sync(install.installRowId);
    const copied = await overviewPage(install.sessionCookie);
    expect(copied.html).toContain('data-testid="headline-sessions"');
    expect(copied.html).not.toContain('data-testid="refresh-while-copying"');
  });

  it("with syncCharges false the session tiles say the operator chose not to import them; a reporting currency other than the sessions' is said plainly", async () => {
    const install = await installViaPortal(NORTHWIND);
    await control("POST", `/installs/${install.installId}/config`, { currency: "NOK" });
    await sync(install.installRowId);
    const withNok = await overviewPage(install.sessionCookie, "?days=90");
    expect(withNok.html).toContain("Some sessions are recorded in EUR, not in your reporting currency NOK. They are shown in their own currency and never converted.");
    expect(withNok.html).toContain("no sessions recorded in NOK");
    // The headline never prints a zero that is not one: what was taken (in EUR), and that none of it is in NOK.
    const taken = (await loadOverview(await storedInstall(install.installRowId), parseRangeQuery({ days: "90" }))).revenue;
    expect(taken.map((r) => r.currency)).toEqual(["EUR"]);
    expect(headline(withNok.html, "headline-revenue")).toBe(new Intl.NumberFormat("en-GB", { style: "currency", currency: "EUR" }).format(taken[0]!.amount));
    expect(headline(withNok.html, "headline-revenue")).not.toContain("NOK");
    expect(/data-testid="headline-revenue-detail"[^>]*>(.*?)<\/p>/.exec(withNok.html)![1]).toBe("none in NOK, your reporting currency");

    // install.config.updated deliveries are ordered by their signed delivered_at, in whole seconds.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await control("POST", `/installs/${install.installId}/config`, { syncCharges: false });
    await syncInstall(install.installRowId, { perPage: 100, now: new Date(Date.now() + 25 * 3_600_000) });
    const page = await overviewPage(install.sessionCookie);
    expect(page.status).toBe(200);
    for (const tile of ["tile-energy", "tile-sessions", "tile-revenue"]) {
      expect(tileHtml(page.html, tile), tile).toContain("You chose not to import charging sessions");
    }
    expect(tileHtml(page.html, "tile-states")).not.toContain("You chose not to import");
    expect(headline(page.html, "headline-charge-points")).toBe("23");
  });
});

describe("while the service is down", () => {
  it("the overview still renders the figures and the 'as of' time from the local copy", async () => {
    const install = await installViaPortal(NORTHWIND);
    await sync(install.installRowId);
    const before = await overviewPage(install.sessionCookie, "?from=2025-01-01&to=2025-12-31");
    const asOf = /data-testid="overview-as-of"[^>]*>(.*?)<\/p>/.exec(before.html)![1];

    // Every API route answers 503 from now on (the identity provider still answers).
    await armApiFault({ path: "/", mode: "error503", forMs: 60_000 });
    const during = await overviewPage(install.sessionCookie, "?from=2025-01-01&to=2025-12-31");
    expect(during.status).toBe(200);
    expect(headline(during.html, "headline-sessions")).toBe("36");
    expect(headline(during.html, "headline-charge-points")).toBe("23");
    expect(/data-testid="overview-as-of"[^>]*>(.*?)<\/p>/.exec(during.html)![1]).toBe(asOf);
    expect(asOf).toMatch(/sessions as of /);
  });
});
