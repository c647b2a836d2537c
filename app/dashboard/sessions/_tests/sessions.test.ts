// The Sessions section (an optional section: app/dashboard/sections.ts), against the running app and
// sandbox: the list newest first with names, its filters, the detail page, the configuration applied,
// sessions not shared, the CSV export (its rows, its quoting, its refusal without a session), 404s for
// another install's ids, and bad query strings. These tests live in the section's folder, so removing
// the section (its folder and its registry entry) removes them too.
//
// No worker runs in the test stack: the sync is called directly.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { changeSandboxRecord, closeSql, control, installViaPortal, operatorRecords, resetWorld, stack } from "../../../../tests/helpers/stack";

const { syncInstall } = await import("@/lib/sync");

beforeEach(resetWorld);
afterAll(closeSql);

const NORTHWIND = 1001;
const FJORDLINE = 1002;

type ChargePoint = { id: number; name: string | null };
type Charge = { id: number; chargePointId: number; startedAt: string; currency: { identifier: string } };

async function visit(path: string, cookie?: string) {
  const response = await fetch(`${stack.appUrl}${path}`, { headers: cookie ? { cookie } : {}, redirect: "manual" });
  return { status: response.status, headers: response.headers, html: await response.text() };
}

/** The ids of the rows the list shows, in order. */
function rowIds(html: string): string[] {
  return [...html.matchAll(/<tr[^>]*data-session-id="(\d+)"/g)].map((m) => m[1]!);
}

async function installAndSync(operatorId: number) {
  const install = await installViaPortal(operatorId);
  const summary = await syncInstall(install.installRowId, { perPage: 100 });
  expect(summary.outcome).toBe("completed");
  return install;
}

describe("before the first sync", () => {
  it("the sessions say they are being copied, the page updates itself, and the export says so too", async () => {
    const install = await installViaPortal(NORTHWIND);
    const sessions = await visit("/dashboard/sessions", install.sessionCookie);
    expect(sessions.status).toBe(200);
    expect(sessions.html).toContain('data-reason="being_copied"');
    expect(sessions.html).toContain('data-testid="refresh-while-copying"'); // until the copy is complete
    expect((await visit("/dashboard/sessions/export", install.sessionCookie)).status).toBe(409);
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
    expect(rowIds(page.html)).toEqual(newestFirst(charges));
    const newest = charges.find((c) => String(c.id) === newestFirst(charges)[0])!;
    const point = points.find((p) => p.id === newest.chargePointId)!;
    expect(page.html).toContain(point.name ?? `Charge point ${point.id}`);
    expect(page.html).not.toContain('data-testid="currency-note"');

    const filtered = await visit(`/dashboard/sessions?perPage=100&chargePoint=${point.id}`, install.sessionCookie);
    expect(rowIds(filtered.html)).toEqual(newestFirst(charges.filter((c) => c.chargePointId === point.id)));

    // Both days included, in UTC; a range given backwards is read the right way round.
    const days = [...new Set(charges.map((c) => c.startedAt.slice(0, 10)))].sort();
    const [from, to] = [days[2]!, days[Math.floor(days.length / 2)]!];
    const inRange = charges.filter((c) => c.startedAt.slice(0, 10) >= from && c.startedAt.slice(0, 10) <= to);
    expect(inRange.length).toBeLessThan(charges.length);
    for (const query of [`from=${from}&to=${to}`, `from=${to}&to=${from}`]) {
      const ranged = await visit(`/dashboard/sessions?perPage=100&${query}`, install.sessionCookie);
      expect(rowIds(ranged.html)).toEqual(newestFirst(inRange));
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

describe("links and ids", () => {
  it("a charge point's page links its recent sessions here; another install's session, or an unknown id, is a 404", async () => {
    const northwind = await installAndSync(NORTHWIND);
    await installAndSync(FJORDLINE);
    const { data: charges } = await operatorRecords<Charge>(NORTHWIND, "charges");
    const busiest = [...new Set(charges.map((c) => c.chargePointId))].map((id) => ({ id, n: charges.filter((c) => c.chargePointId === id).length })).sort((a, b) => b.n - a.n)[0]!;
    const detail = await visit(`/dashboard/charge-points/${busiest.id}`, northwind.sessionCookie);
    expect(detail.html).toContain(`href="/dashboard/sessions?chargePoint=${busiest.id}"`);
    const links = [...detail.html.matchAll(/href="\/dashboard\/sessions\/(\d+)"/g)].map((m) => m[1]);
    expect(links.length).toBe(Math.min(10, busiest.n));

    const { data: theirCharges } = await operatorRecords<Charge>(FJORDLINE, "charges");
    for (const path of [`/dashboard/sessions/${theirCharges[0]!.id}`, "/dashboard/sessions/1e3"]) {
      const page = await visit(path, northwind.sessionCookie);
      expect(page.status, path).toBe(404);
    }
  });
});

describe("bad query strings", () => {
  it("fall back to the defaults, never an error, on the page and in the export", async () => {
    const install = await installAndSync(NORTHWIND);
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
