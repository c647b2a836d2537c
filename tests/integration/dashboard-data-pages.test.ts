// The charge points and sessions pages (issue 13), against the running app and sandbox: what they
// show before the first sync (live charge points, "being copied" sessions), and after a sync of a
// seeded operator: search, filters and sort checked against the sandbox's own records, details, 404s
// for another install's ids, sessions newest first with names, the configuration applied, the CSV
// export (its rows, its quoting, its refusal without a session), and bad query strings.
//
// No worker runs in the test stack: the sync is called directly, as tests/integration/sync.test.ts does.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { armApiFault, changeSandboxRecord, closeSql, control, installViaPortal, operatorRecords, resetWorld, sandboxEvents, stack } from "../helpers/stack";

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
  it("the charge points are read live, with a note; the sessions say they are being copied, and the export says so too", async () => {
    const install = await installViaPortal(NORTHWIND);
    const points = await visit("/dashboard/charge-points", install.sessionCookie);
    expect(points.status).toBe(200);
    expect(points.html).toContain('data-testid="copy-pending"');
    expect(points.html).toContain('data-testid="charge-point-count"');
    expect(rowIds(points.html, "data-charge-point-id")).toHaveLength(10);
    const reads = (await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId && String(e.detail.path).startsWith("/api/v1/charge-points"));
    expect(reads).toHaveLength(1);

    const sessions = await visit("/dashboard/sessions", install.sessionCookie);
    expect(sessions.status).toBe(200);
    expect(sessions.html).toContain('data-reason="being_copied"');
    expect(sessions.html).toContain('data-testid="refresh-while-copying"'); // the page updates itself until the copy is complete
    expect((await visit("/dashboard/sessions/export", install.sessionCookie)).status).toBe(409);
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
    const sessionLinks = [...detail.html.matchAll(/href="\/dashboard\/sessions\/(\d+)"/g)].map((m) => m[1]);
    expect(sessionLinks.length).toBe(Math.min(10, charges.filter((c) => c.chargePointId === busiest.id).length));

    const { data: theirs } = await operatorRecords<ChargePoint>(FJORDLINE, "charge-points");
    const { data: theirCharges } = await operatorRecords<Charge>(FJORDLINE, "charges");
    for (const path of [
      `/dashboard/charge-points/${theirs[0]!.id}`,
      `/dashboard/sessions/${theirCharges[0]!.id}`,
      "/dashboard/charge-points/99999999",
      "/dashboard/charge-points/not-an-id",
      "/dashboard/sessions/1e3",
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

describe("sessions, from the local copy", () => {
  it("newest first, with the charge point's name, filtered by charge point and by date range", async () => {
    const install = await installAndSync(NORTHWIND);
    const { data: charges } = await operatorRecords<Charge>(NORTHWIND, "charges");
    const { data: points } = await operatorRecords<ChargePoint>(NORTHWIND, "charge-points");
    const newestFirst = (list: Charge[]) => [...list].sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.id - a.id).map((c) => String(c.id));

    const page = await visit("/dashboard/sessions?perPage=100", install.sessionCookie);
    expect(page.status).toBe(200);
    expect(rowIds(page.html, "data-session-id")).toEqual(newestFirst(charges));
    const newest = charges.find((c) => String(c.id) === newestFirst(charges)[0])!;
    const point = points.find((p) => p.id === newest.chargePointId)!;
    expect(page.html).toContain(point.name ?? `Charge point ${point.id}`);
    expect(page.html).not.toContain('data-testid="currency-note"');

    const filtered = await visit(`/dashboard/sessions?perPage=100&chargePoint=${point.id}`, install.sessionCookie);
    expect(rowIds(filtered.html, "data-session-id")).toEqual(newestFirst(charges.filter((c) => c.chargePointId === point.id)));

    // Both days included, in UTC; a range given backwards is read the right way round.
    const days = [...new Set(charges.map((c) => c.startedAt.slice(0, 10)))].sort();
    const [from, to] = [days[2]!, days[Math.floor(days.length / 2)]!];
    const inRange = charges.filter((c) => c.startedAt.slice(0, 10) >= from && c.startedAt.slice(0, 10) <= to);
    expect(inRange.length).toBeLessThan(charges.length);
    for (const query of [`from=${from}&to=${to}`, `from=${to}&to=${from}`]) {
      const ranged = await visit(`/dashboard/sessions?perPage=100&${query}`, install.sessionCookie);
      expect(rowIds(ranged.html, "data-session-id")).toEqual(newestFirst(inRange));
    }

    const detail = await visit(`/dashboard/sessions/${newest.id}`, install.sessionCookie);
    expect(detail.status).toBe(200);
    expect(detail.html).toContain(`href="/dashboard/charge-points/${point.id}"`);
  });

  it("a reporting currency the records are not in is said once, amounts unconverted", async () => {
    const install = await installAndSync(NORTHWIND);
    await control("POST", `/installs/${install.installId}/config`, { currency: "NOK" });
    const page = await visit("/dashboard/sessions", install.sessionCookie);
    expect(page.html.match(/data-testid="currency-note"/g)).toHaveLength(1);
    expect(page.html).toContain("€"); // EUR amounts, as recorded
  });

  it("sessions the operator chose not to import are explained, on the page and by the export", async () => {
    const install = await installViaPortal(NORTHWIND);
    await control("POST", `/installs/${install.installId}/config`, { syncCharges: false });
    const off = await visit("/dashboard/sessions", install.sessionCookie);
    expect(off.html).toContain('data-reason="not_imported"');
    expect((await visit("/dashboard/sessions/export", install.sessionCookie)).status).toBe(409);
  });
});

describe("sessions not shared", () => {
  it("an install not granted charge-transactions:read is told so, never 'being copied'", async () => {
    await control("POST", "/app/scopes", { scopes: ["charge-points:read"] });
    const install = await installViaPortal(NORTHWIND);
    const page = await visit("/dashboard/sessions", install.sessionCookie);
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-reason="not_granted"');
  });
});

describe("the CSV export", () => {
  it("the filtered list, header and rows, RFC 4180 quoting, formulas neutralised", async () => {
    const install = await installViaPortal(NORTHWIND);
    const { data: charges } = await operatorRecords<Charge>(NORTHWIND, "charges");
    const target = charges[0]!.chargePointId;
    const formula = '=HYPERLINK("http://evil.example","click"),1';
    await changeSandboxRecord(NORTHWIND, "charge-points", target, { name: formula });
    await syncInstall(install.installRowId, { perPage: 100 });

    const all = await fetch(`${stack.appUrl}/dashboard/sessions/export`, { headers: { cookie: install.sessionCookie } });
    expect(all.status).toBe(200);
    expect(all.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(all.headers.get("content-disposition")).toMatch(/^attachment; filename="sessions-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = (await all.text()).split("\r\n");
    expect(lines.at(-1)).toBe(""); // every record ends with CRLF
    expect(lines[0]).toBe("session_id,started_at_utc,stopped_at_utc,charge_point_id,charge_point_name,state,type,energy_kwh,duration_minutes,price,cost,currency");
    expect(lines.slice(1, -1)).toHaveLength(charges.length);

    const filtered = await fetch(`${stack.appUrl}/dashboard/sessions/export?chargePoint=${target}&page=3`, { headers: { cookie: install.sessionCookie } });
    const rows = (await filtered.text()).split("\r\n").slice(1, -1);
    expect(rows).toHaveLength(charges.filter((c) => c.chargePointId === target).length);
    // The name reaches the sheet as text: a leading ', then quoted because of its quotes and comma.
    for (const row of rows) expect(row).toContain(`,"'=HYPERLINK(""http://evil.example"",""click""),1",`);
  });

  it("is refused without a session, and without data in the answer", async () => {
    const install = await installAndSync(NORTHWIND);
    const response = await fetch(`${stack.appUrl}/dashboard/sessions/export`, { redirect: "manual" });
    expect(response.status).toBe(401);
    const body = await response.text();
    expect(body).not.toContain("session_id");
    expect(body).not.toMatch(/\d{7}/);
    // A cookie that is not a session is no session either.
    const forged = await fetch(`${stack.appUrl}/dashboard/sessions/export`, { headers: { cookie: `${install.sessionCookie.split("=")[0]}=forged` }, redirect: "manual" });
    expect(forged.status).toBe(401);
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

    for (const query of ["from=2025-13-45&to=yesterday&chargePoint=abc&page=-3&perPage=1000", "from=2025-02-30", "chargePoint=1&chargePoint=2"]) {
      const page = await visit(`/dashboard/sessions?${query}`, install.sessionCookie);
      expect(page.status, query).toBe(200);
      const csv = await fetch(`${stack.appUrl}/dashboard/sessions/export?${query}`, { headers: { cookie: install.sessionCookie } });
      expect(csv.status, query).toBe(200);
      await csv.text();
    }
    const { total: charges } = await operatorRecords(NORTHWIND, "charges");
    const ignored = await visit("/dashboard/sessions?from=2025-13-45&chargePoint=abc&perPage=1000", install.sessionCookie);
    expect(ignored.html).toContain(`1–25 of ${charges}`);
  });
});
