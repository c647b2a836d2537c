// The charge points pages (issue 13), against the running app and sandbox: what they show before the
// first sync (the live list), and after a sync of a seeded operator: search, filters and sort checked
// against the sandbox's own records, details with recent sessions, 404s for another install's ids,
// and bad query strings. The Sessions section's pages are tested in its own folder.
//
// No worker runs in the test stack: the sync is called directly, as tests/integration/sync.test.ts does.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { armApiFault, closeSql, installViaPortal, operatorRecords, resetWorld, sandboxEvents, stack } from "../helpers/stack";

const { syncInstall } = await import("@/lib/sync");

beforeEach(resetWorld);
afterAll(closeSql);

const NORTHWIND = 1001;
const FJORDLINE = 1002;

type ChargePoint = {
  id: number;
  name: string | null;
  evseId: string;
  serialNumber: string;
  state: string;
  type: "ac" | "dc";
  maxKw: number;
  siteId: number | null;
  teamId: number;
  location: { addressLabel: string; address: { city: string } };
};
type Charge = { id: number; chargePointId: number; startedAt: string; currency: { identifier: string } };

async function visit(path: string, cookie?: string) {
  const response = await fetch(`${stack.appUrl}${path}`, { headers: cookie ? { cookie } : {}, redirect: "manual" });
  return { status: response.status, headers: response.headers, html: await response.text() };
}

/** The ids of the rows a list page shows, in order. */
function rowIds(html: string, attribute: "data-charge-point-id" | "data-session-id"): string[] {
  return [...html.matchAll(new RegExp(`<tr[^>]*${attribute}="(\\d+)"`, "g"))].map((m) => m[1]!);
}

async function installAndSync(operatorId: number) {
  const install = await installViaPortal(operatorId);
  const summary = await syncInstall(install.installRowId, { perPage: 100 });
  expect(summary.outcome).toBe("completed");
  return install;
}

const sortedIds = (records: { id: number }[]) => records.map((r) => String(r.id)).sort();

describe("before the first sync", () => {
  it("the charge points are read live, with a note", async () => {
    const install = await installViaPortal(NORTHWIND);
    const points = await visit("/dashboard/charge-points", install.sessionCookie);
    expect(points.status).toBe(200);
    expect(points.html).toContain('data-testid="copy-pending"');
    expect(points.html).toContain('data-testid="charge-point-count"');
    expect(rowIds(points.html, "data-charge-point-id")).toHaveLength(10);
    const reads = (await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId && String(e.detail.path).startsWith("/api/v1/charge-points"));
    expect(reads).toHaveLength(1);

  });

  it("the same live page opened four times at once is one API read; another page is its own (lib/partner-api/shared-read.ts)", async () => {
    const install = await installViaPortal(NORTHWIND);
    const chargePointReads = async () =>
      (await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId && String(e.detail.path).startsWith("/api/v1/charge-points"));
    const before = (await chargePointReads()).length;
    // The service takes its time (1.5 s), so the five tabs are surely in flight together.
    await armApiFault({ path: "/charge-points", mode: "latency", latencyMs: 1_500, count: 5, installId: install.installId });

    const tabs = await Promise.all([0, 0, 0, 0, 1].map((page) => visit(`/dashboard/charge-points?page=${page}&perPage=10`, install.sessionCookie)));
    for (const tab of tabs) {
      expect(tab.status).toBe(200);
      expect(rowIds(tab.html, "data-charge-point-id")).toHaveLength(10);
    }
    // Every copy of page 0 shows the same rows, and page 1 others.
    expect(new Set(tabs.slice(0, 4).map((tab) => rowIds(tab.html, "data-charge-point-id").join())).size).toBe(1);
    expect(rowIds(tabs[4]!.html, "data-charge-point-id")).not.toEqual(rowIds(tabs[0]!.html, "data-charge-point-id"));
    const reads = (await chargePointReads()).slice(before).map((e) => String(e.detail.path));
    expect(reads.filter((path) => path.includes("page=0"))).toHaveLength(1);
    expect(reads.filter((path) => path.includes("page=1"))).toHaveLength(1);
    expect(reads).toHaveLength(2);
  });
});

describe("charge points, from the local copy", () => {
  it("search finds a charge point by name and by EVSE id; filters narrow as the sandbox's records say", async () => {
    const install = await installAndSync(NORTHWIND);
    const { data: records } = await operatorRecords<ChargePoint>(NORTHWIND, "charge-points");
    const list = async (query: string) => {
      const page = await visit(`/dashboard/charge-points?perPage=100&${query}`, install.sessionCookie);
      expect(page.status).toBe(200);
      return page;
    };

    const all = await list("");
    expect(all.html).toContain('data-testid="as-of"');
    expect(all.html).not.toContain('data-testid="copy-pending"');
    expect(sortedIds(rowIds(all.html, "data-charge-point-id").map((id) => ({ id: Number(id) })))).toEqual(sortedIds(records));

    // By name: every record whose searched fields contain the words (case-insensitive), and the named one among them.
    const named = records.find((r) => r.name !== null)!;
    const matches = (term: string) =>
      records.filter((r) => [r.name, r.evseId, r.serialNumber, r.location.addressLabel, r.location.address.city].some((f) => f?.toLowerCase().includes(term.toLowerCase())));
    const byName = await list(`q=${encodeURIComponent(named.name!.toUpperCase())}`);
    expect(rowIds(byName.html, "data-charge-point-id")).toContain(String(named.id));
    expect(rowIds(byName.html, "data-charge-point-id").sort()).toEqual(sortedIds(matches(named.name!)));

    const byEvse = await list(`q=${encodeURIComponent(records[5]!.evseId.toLowerCase())}`);
    expect(rowIds(byEvse.html, "data-charge-point-id")).toEqual([String(records[5]!.id)]);

    // A city matches by address; LIKE's wildcards are plain characters in a search.
    expect(rowIds((await list("q=utrecht")).html, "data-charge-point-id").sort()).toEqual(sortedIds(matches("utrecht")));
    const wildcard = await list("q=%25");
    expect(rowIds(wildcard.html, "data-charge-point-id")).toEqual([]);
    expect(wildcard.html).toContain("No charge points match");
    expect(wildcard.html).toContain("Clear filters");

    // Each filter, and two together, against the records.
    const site = records.find((r) => r.siteId !== null)!.siteId!;
    const team = records[0]!.teamId;
    const cases: [string, ChargePoint[]][] = [
      ["type=dc", records.filter((r) => r.type === "dc")],
      ["state=available", records.filter((r) => r.state === "available")],
      [`site=${site}`, records.filter((r) => r.siteId === site)],
      [`team=${team}`, records.filter((r) => r.teamId === team)],
      ["type=ac&state=available", records.filter((r) => r.type === "ac" && r.state === "available")],
    ];
    for (const [query, expected] of cases) {
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(records.length);
      const page = await list(query);
      expect(rowIds(page.html, "data-charge-point-id").sort(), query).toEqual(sortedIds(expected));
      expect(page.html).toContain(`1–${expected.length} of ${expected.length}`);
    }

    // Sorted by power, highest first; pages of 10 continue where the last ended.
    const byPower = rowIds((await list("sort=power&dir=desc")).html, "data-charge-point-id");
    const power = (id: string) => records.find((r) => String(r.id) === id)!.maxKw;
    expect(byPower.map(power)).toEqual([...byPower.map(power)].sort((a, b) => b - a));
    const first = rowIds((await visit("/dashboard/charge-points?perPage=10", install.sessionCookie)).html, "data-charge-point-id");
    const second = rowIds((await visit("/dashboard/charge-points?perPage=10&page=1", install.sessionCookie)).html, "data-charge-point-id");
    expect(first).toHaveLength(10);
    expect(second).toHaveLength(10);
    expect(first.filter((id) => second.includes(id))).toEqual([]);

    // States in words, never the raw value.
    expect(all.html).not.toMatch(/>busy-charging</);
    if (records.some((r) => r.state === "busy-charging")) expect(all.html).toContain(">Charging<");
  });

  it("the detail page shows the charge point and its recent sessions; another install's id, or an unknown one, is a 404", async () => {
    const northwind = await installAndSync(NORTHWIND);
    await installAndSync(FJORDLINE);
    const { data: records } = await operatorRecords<ChargePoint>(NORTHWIND, "charge-points");
    const { data: charges } = await operatorRecords<Charge>(NORTHWIND, "charges");
    const busiest = records.map((r) => ({ r, n: charges.filter((c) => c.chargePointId === r.id).length })).sort((a, b) => b.n - a.n)[0]!.r;

    const detail = await visit(`/dashboard/charge-points/${busiest.id}`, northwind.sessionCookie);
    expect(detail.status).toBe(200);
    expect(detail.html).toContain(busiest.evseId);
    expect(detail.html).toContain(busiest.serialNumber);
    expect(detail.html).toContain('data-testid="connectors"');
    const recent = /data-testid="recent-sessions"[^>]*>(.*?)<\/ul>/s.exec(detail.html)?.[1] ?? "";
    expect(recent.match(/<li /g)?.length ?? 0).toBe(Math.min(10, charges.filter((c) => c.chargePointId === busiest.id).length));

    const { data: theirs } = await operatorRecords<ChargePoint>(FJORDLINE, "charge-points");
    for (const path of [
      `/dashboard/charge-points/${theirs[0]!.id}`,
      "/dashboard/charge-points/99999999",
      "/dashboard/charge-points/not-an-id",
    ]) {
      const page = await visit(path, northwind.sessionCookie);
      expect(page.status, path).toBe(404);
      // Next.js sends a 404's panel in its payload, for the browser to render.
      expect(page.html).toContain("not-found");
      if (theirs[0]!.name) expect(page.html).not.toContain(theirs[0]!.name);
    }
  });
});

describe("names where names are known", () => {
  it("a site is named by its charge points' most common address, with its id; never a bare 'Site <id>' when an address is known", async () => {
    const install = await installAndSync(NORTHWIND);
    const { data: records } = await operatorRecords<ChargePoint>(NORTHWIND, "charge-points");
    const sited = records.filter((r) => r.siteId !== null);
    const list = await visit("/dashboard/charge-points?perPage=100", install.sessionCookie);
    const options = [...list.html.matchAll(/<option value="(\d+)"[^>]*>([^<]*)<\/option>/g)].map((m) => ({ value: m[1]!, text: m[2]!.replace(/&#x27;/g, "'").replace(/&amp;/g, "&") }));
    for (const siteId of new Set(sited.map((r) => r.siteId!))) {
      const addresses = new Map<string, number>();
      for (const r of sited.filter((r) => r.siteId === siteId)) addresses.set(r.location.addressLabel, (addresses.get(r.location.addressLabel) ?? 0) + 1);
      const [address] = [...addresses].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
      const option = options.find((o) => o.value === String(siteId));
      expect(option?.text, String(siteId)).toContain(address);
      expect(option?.text).toContain(`(site ${siteId})`);
      expect(option?.text).not.toMatch(/^Site \d+$/);
    }
    const one = sited[0]!;
    const detail = await visit(`/dashboard/charge-points/${one.id}`, install.sessionCookie);
    expect(detail.html.replace(/<!-- -->/g, "")).toContain(`(site ${one.siteId})`);
    expect(detail.html).not.toContain(`>Site ${one.siteId}<`);
  });
});

describe("bad query strings", () => {
  it("fall back to the defaults, never an error", async () => {
    const install = await installAndSync(NORTHWIND);
    const { total } = await operatorRecords(NORTHWIND, "charge-points");
    for (const query of [
      "page=-1&perPage=7&sort=drop%20table&dir=sideways&type=xx&state=%3Cscript%3E&site=abc&team=1e9",
      `q=${"x".repeat(5000)}`,
      "page=1e99&perPage=NaN",
      "q=a&q=b&type=ac&type=dc",
      "q=%00%27%22",
    ]) {
      const page = await visit(`/dashboard/charge-points?${query}`, install.sessionCookie);
      expect(page.status, query).toBe(200);
      expect(page.html).not.toContain("&lt;script");
    }
    const defaults = await visit("/dashboard/charge-points?page=-1&perPage=7&sort=nope&type=xx", install.sessionCookie);
    expect(defaults.html).toContain(`1–${Math.min(25, total)} of ${total}`);

  });
});
