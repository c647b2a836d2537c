// The staff console's install list at 10,000 installs (issue 14): the first page is read in a fixed
// number of queries whatever the number of installs; search finds one install by its operator id,
// its install id, its row id, its slug and a fragment of its name; each token and sync health filter
// returns exactly the installs in that state; pages neither repeat nor miss an install; and a bad
// query string shows the default page, never an error.
//
// The 10,000 installs are made by the sandbox in one call and stored straight into the app's tables
// (storeBulkInstalls), once for the whole file; a handful are then put in known states.
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bulkInstalls, closeSql, resetWorld, sql, stack, storeBulkInstalls } from "../helpers/stack";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { recordLatestFromRuns } from "../helpers/sync-latest";
import { scaled } from "../helpers/time-scale";

const { fetchInstallList, parseInstallListQuery, DEFAULT_QUERY, SYNC_LAG_INTERVALS } = await import("@/lib/admin/install-list");
const { PrismaClient } = await import("@/lib/db/generated/client");
const { env } = await import("@/lib/env");

const TOTAL = 10_000;
/**
 * What a row of the list may cost the page, in bytes of HTML and payload: about 2,750 as each row is
 * sent now (its markup once, its strings in the payload); 4,750 when its markup was sent twice.
 */
const BYTES_PER_ROW = 3_500;
const FIRST = 10;

/** A Prisma client that counts the SQL statements it sends (Prisma's query events: one per statement). */
function countingClient() {
  const client = new PrismaClient({ adapter: new PrismaPg({ connectionString: stack.databaseUrl, max: 4 }), log: [{ emit: "event", level: "query" }] });
  const counter = { statements: 0, texts: [] as string[], params: [] as string[] };
  client.$on("query", (event) => {
    counter.statements += 1;
    counter.texts.push(event.query);
    counter.params.push(event.params);
  });
  return { client, counter };
}
const counting = countingClient();

async function statementsFor(query: Parameters<typeof fetchInstallList>[0]) {
  const before = counting.counter.statements;
  const list = await fetchInstallList(query, { client: counting.client });
  return { list, statements: counting.counter.statements - before, texts: counting.counter.texts.slice(before), params: counting.counter.params.slice(before) };
}

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Actual Rows"?: number; "Actual Loops"?: number; "Rows Removed by Filter"?: number; Plans?: PlanNode[] };
/**
 * What a statement reads, by its plan (EXPLAIN ANALYZE): every row each scan returned or filtered
 * out, and each probe of an index (an empty one counts 1), over all its loops; and the tables it read.
 */
function readsOf(node: PlanNode): { rows: number; tables: string[] } {
  const scan = /Scan$/.test(node["Node Type"]);
  const own = scan ? ((node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0) + 1) * (node["Actual Loops"] ?? 1) : 0;
  const children = (node.Plans ?? []).map(readsOf);
  return {
    rows: own + children.reduce((sum, c) => sum + c.rows, 0),
    tables: [...(node["Relation Name"] ? [node["Relation Name"]] : []), ...children.flatMap((c) => c.tables)],
  };
}
/** The page's statement and the counts' statement of a list query, each with what its plan reads. */
async function plansFor(params: Record<string, string>) {
  const { list, texts, params: values } = await statementsFor(query(params));
  const plans: Record<"page" | "counts", { rows: number; tables: string[] }> = { page: { rows: 0, tables: [] }, counts: { rows: 0, tables: [] } };
  for (const [n, text] of texts.entries()) {
    const [row] = await sql<{ "QUERY PLAN": { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, JSON.parse(values[n]!) as unknown[]);
    plans[/^\s*WITH page/.test(text) ? "page" : "counts"] = readsOf(row!["QUERY PLAN"][0]!.Plan);
  }
  return { ...plans, matching: list.matching };
}

const query = (params: Record<string, string>) => parseInstallListQuery(params);
const ids = (list: { items: { id: string }[] }) => list.items.map((i) => i.id);

let rowIds: string[] = [];
const statementsAt: Record<number, number> = {};
/** The installs put in known states, by what was done to them. */
const known: Record<string, string> = {};

beforeAll(async () => {
  await resetWorld();
  // A small world first: its first page's statements, to compare with the same page at 10,000.
  rowIds = await storeBulkInstalls(await bulkInstalls({ count: FIRST, charges: 0 }));
  statementsAt[FIRST] = (await statementsFor(DEFAULT_QUERY)).statements;
  rowIds.push(...(await storeBulkInstalls(await bulkInstalls({ count: TOTAL - FIRST, charges: 0 }))));
  // The names and slugs the sandbox gives its bulk operators (sandbox/README.md: "Bulk Operator <n>",
  // slug bulk-operator-<n>), as a service that sends them would have had them stored.
  await sql(
    `UPDATE installs SET operator_name = 'Bulk Operator ' || (operator_id::int - 100000), slug = 'bulk-operator-' || (operator_id::int - 100000)`,
  );

  const [a, b, c, d, e, f, g, h, i, j, named] = rowIds.slice(100, 111) as string[];
  Object.assign(known, { accessExpired: a, refreshExpiring: b, refreshUnknown: c, uninstalled: d, flagged: e, upToDate: f, lagging: g, failing: h, recovered: i, firstRunning: j, named });
  await sql("UPDATE token_grants SET access_token_expires_at = now() - interval '1 minute' WHERE install_row_id = $1", [a]);
  await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '2 days' WHERE install_row_id = $1", [b]);
  await sql("UPDATE token_grants SET refresh_started_at = now() - interval '5 minutes' WHERE install_row_id = $1", [c]);
  // An uninstall deletes the grant (lib/installs/state.ts); a flagged install keeps it.
  await sql("DELETE FROM token_grants WHERE install_row_id = $1", [d]);
  await sql("UPDATE installs SET status = 'REVOKED', status_changed_at = now(), revoked_at = now() WHERE id = $1", [d]);
  await sql("UPDATE installs SET status = 'NEEDS_REAUTH', status_changed_at = now() WHERE id = $1", [e]);
  await sql("UPDATE installs SET operator_name = 'Zephyr Ładowarki Sp. z o.o.' WHERE id = $1", [named]);

  // Sync state as lib/sync leaves it: a checkpoint per resource, a run per resource per sync (one
  // sync's runs share started_at, and a sync stops at its first failure).
  const lagMinutes = SYNC_LAG_INTERVALS * env().SYNC_INTERVAL_MINUTES;
  const checkpoints = (install: string, endedMinutesAgo: (number | null)[]) =>
    sql(
      `INSERT INTO sync_checkpoints (install_row_id, resource, next_page, per_page, last_pass_ended_at, updated_at)
       SELECT $1, resource, 0, 100, CASE WHEN ago IS NULL THEN NULL ELSE now() - make_interval(mins => ago) END, now()
       FROM unnest(ARRAY['teams', 'charge_points', 'charges'], $2::int[]) AS t(resource, ago)`,
      [install, endedMinutesAgo],
    );
  const runs = (install: string, minutesAgo: number, outcomes: string[]) =>
    sql(
      `INSERT INTO sync_runs (id, install_row_id, resource, started_at, outcome)
       SELECT gen_random_uuid(), $1, resource, now() - make_interval(mins => $2), outcome
       FROM unnest(ARRAY['teams', 'charge_points', 'charges'], $3::text[]) AS t(resource, outcome) WHERE outcome IS NOT NULL`,
      [install, minutesAgo, outcomes],
    );
  await checkpoints(f!, [5, 5, 5]);
  await runs(f!, 5, ["completed", "completed", "completed"]);
  await checkpoints(g!, [5, lagMinutes + 30, 5]);
  await runs(g!, 5, ["completed", "completed", "completed"]);
  await checkpoints(h!, [20, 20, 20]);
  await runs(h!, 20, ["completed", "completed", "completed"]);
  await runs(h!, 2, ["completed", "failed"]);
  await checkpoints(i!, [2, 2, 2]);
  await runs(i!, 20, ["failed"]);
  await runs(i!, 2, ["completed", "completed", "completed"]);
  // The first sync still under way: nothing has finished yet.
  await checkpoints(j!, [null, null, null]);
  await runs(j!, 1, ["running"]);
  await recordLatestFromRuns();
  await sql("ANALYZE installs, token_grants, sync_checkpoints, sync_runs, sync_latest");
  statementsAt[TOTAL] = (await statementsFor(DEFAULT_QUERY)).statements;
}, scaled(120_000));

afterAll(async () => {
  await counting.client.$disconnect();
  await closeSql();
});

describe("bounded queries", () => {
  it("the first page takes the same number of statements at 10 and at 10,000 installs, two in all", () => {
    expect(statementsAt[FIRST]).toBe(2);
    expect(statementsAt[TOTAL]).toBe(statementsAt[FIRST]);
  });

  it("a search, a filtered page, a computed sort and a deep page take two statements too", async () => {
    const cases: Record<string, string>[] = [{ q: "bulk operator 77" }, { sync: "failing" }, { sort: "synced", token: "healthy" }, { page: "399" }];
    for (const params of cases) {
      const { list, statements } = await statementsFor(query(params));
      expect(statements, JSON.stringify(params)).toBe(2);
      expect(list.items.length, JSON.stringify(params)).toBeGreaterThan(0);
    }
  });

  it("the sync health filters and their counts read each resource's latest outcome (sync_latest), never the runs' history (sync_runs)", async () => {
    for (const sync of ["failing", "up_to_date", "lagging", "never", "paused"]) {
      const { texts } = await statementsFor(query({ sync }));
      expect(texts, sync).toHaveLength(2);
      for (const text of texts) expect(text, sync).not.toContain("sync_runs");
      expect(texts.join("\n"), sync).toContain("sync_latest");
    }
    // What the sync writes with each run's end is what they read: with the failing install's runs gone
    // (a purge of old runs may delete them), it is still failing, and its last sync is still shown.
    const [{ count }] = (await sql<{ count: number }>("SELECT count(*)::int AS count FROM sync_runs WHERE install_row_id = $1", [known.failing])) as [{ count: number }];
    expect(count).toBeGreaterThan(0);
    const kept = await sql("DELETE FROM sync_runs WHERE install_row_id = $1 RETURNING *", [known.failing]);
    try {
      const list = await fetchInstallList(query({ sync: "failing" }));
      expect(ids(list)).toEqual([known.failing]);
      expect(list.matching).toBe(1);
      expect(list.items[0]!.lastSyncRunAt).toBeInstanceOf(Date);
    } finally {
      await sql("INSERT INTO sync_runs SELECT * FROM jsonb_populate_recordset(NULL::sync_runs, $1::jsonb)", [JSON.stringify(kept)]);
    }
  });

  it("the last-sync sort and every sync filter read a page's rows, not every install's sync state", async () => {
    // The page: an index range of installs and the shown rows' joins, a few hundred rows at most
    // (reading each install's checkpoints to sort or filter them read more than 10,000: issue 34).
    // The counts: one read of installs' status index (they count every install), and the matching
    // installs through the filter's own index; nothing per install.
    const cases: Record<string, string>[] = [{ sort: "synced" }, { sort: "synced", page: "200" }, { sync: "lagging" }, { sync: "up_to_date" }, { sync: "failing" }, { sync: "never", sort: "synced" }];
    for (const params of cases) {
      const plans = await plansFor(params);
      const label = JSON.stringify(params);
      expect(plans.page.rows, `${label}: page`).toBeLessThan(params.page ? 5_000 + 500 : 500);
      expect(plans.page.tables, `${label}: page`).not.toContain("sync_checkpoints");
      expect(plans.counts.rows, `${label}: counts`).toBeLessThanOrEqual(TOTAL + 1 + plans.matching + 100);
      expect(new Set(plans.counts.tables), `${label}: counts`).toEqual(new Set(["installs"]));
    }
  });

  it("a page past the last one shows the last page, with one statement more", async () => {
    const { list, statements } = await statementsFor(query({ perPage: "100", page: "5000" }));
    expect(list.page).toBe(99);
    expect(list.items).toHaveLength(100);
    expect(statements).toBe(3);
  });
});

describe("search", () => {
  it("finds exactly one install by operator id, install id, row id, slug and a name fragment", async () => {
    const [target] = await sql<{ id: string; install_id: number; operator_id: string; slug: string }>(
      "SELECT id, install_id, operator_id, slug FROM installs WHERE id = $1",
      [rowIds[4242]],
    );
    for (const q of [target!.operator_id, String(target!.install_id), target!.id.toUpperCase(), target!.slug]) {
      const list = await fetchInstallList(query({ q }));
      expect(ids(list), q).toEqual([target!.id]);
      expect(list.matching, q).toBe(1);
    }
    // A fragment, case-insensitively, with a letter outside ASCII (ILIKE folds case as the database's
    // locale does; the test database's C locale folds ASCII letters only, so the Ł keeps its case here).
    const byName = await fetchInstallList(query({ q: "  ŁADOWARKI sp. " }));
    expect(ids(byName)).toEqual([known.named]);
    expect(byName.items[0]!.operatorName).toBe("Zephyr Ładowarki Sp. z o.o.");
  });

  it("a name fragment matches every name that contains it; LIKE's wildcards match only themselves", async () => {
    // "Bulk Operator 999" and "Bulk Operator 9990" to "9999": eleven.
    const list = await fetchInstallList(query({ q: "Operator 999" }));
    expect(list.matching).toBe(11);
    expect((await fetchInstallList(query({ q: "%" }))).matching).toBe(0);
    expect((await fetchInstallList(query({ q: "bulk_operator" }))).matching).toBe(0);
  });

  it("an id that matches nothing gives an empty page, not an error", async () => {
    for (const q of ["999999999999", "00000000-0000-4000-8000-000000000000", "no such operator"]) {
      const list = await fetchInstallList(query({ q }));
      expect(list.items, q).toEqual([]);
      expect(list.matching, q).toBe(0);
      expect(list.total, q).toBe(TOTAL);
    }
  });
});

describe("filters", () => {
  async function matchingIds(params: Record<string, string>) {
    const list = await fetchInstallList(query({ ...params, perPage: "100" }));
    return { ids: new Set(ids(list)), matching: list.matching };
  }

  it("token health: each filter returns exactly the installs in that state", async () => {
    expect(await matchingIds({ token: "access_expired" })).toEqual({ ids: new Set([known.accessExpired]), matching: 1 });
    expect(await matchingIds({ token: "refresh_expiring" })).toEqual({ ids: new Set([known.refreshExpiring]), matching: 1 });
    expect(await matchingIds({ token: "refresh_unknown" })).toEqual({ ids: new Set([known.refreshUnknown]), matching: 1 });
    expect(await matchingIds({ token: "no_grant" })).toEqual({ ids: new Set([known.uninstalled]), matching: 1 });
    expect((await matchingIds({ token: "healthy" })).matching).toBe(TOTAL - 4);
  });

  it("sync health: each filter returns exactly the installs in that state", async () => {
    expect(await matchingIds({ sync: "up_to_date" })).toEqual({ ids: new Set([known.upToDate, known.recovered]), matching: 2 });
    expect(await matchingIds({ sync: "lagging" })).toEqual({ ids: new Set([known.lagging]), matching: 1 });
    expect(await matchingIds({ sync: "failing" })).toEqual({ ids: new Set([known.failing]), matching: 1 });
    expect(await matchingIds({ sync: "paused" })).toEqual({ ids: new Set([known.uninstalled, known.flagged]), matching: 2 });
    const never = await matchingIds({ sync: "never" });
    expect(never.matching).toBe(TOTAL - 6);
    // A first sync under way has finished nothing yet: still "never".
    expect(ids(await fetchInstallList(query({ sync: "never", q: known.firstRunning! })))).toEqual([known.firstRunning]);
  });

  it("state, combined with a search: the counts say how many match in each state", async () => {
    const list = await fetchInstallList(query({ state: "NEEDS_REAUTH" }));
    expect(ids(list)).toEqual([known.flagged]);
    expect(list.counts.NEEDS_REAUTH).toEqual({ all: 1, matching: 1 });
    expect(list.counts.ACTIVE).toEqual({ all: TOTAL - 2, matching: 0 });
    expect(list.total).toBe(TOTAL);
    const none = await fetchInstallList(query({ state: "REVOKED", q: "zephyr" }));
    expect(none.matching).toBe(0);
    expect(none.filtered).toBe(true);
  });

  it("each row carries its health in words the page shows", async () => {
    const [failing] = (await fetchInstallList(query({ sync: "failing" }))).items;
    expect(failing).toMatchObject({ id: known.failing, status: "ACTIVE", tokenHealth: "healthy", syncHealth: "failing" });
    expect(failing!.syncedAt).toBeInstanceOf(Date);
    const [unknown] = (await fetchInstallList(query({ token: "refresh_unknown" }))).items;
    expect(unknown!.refreshStartedAt).toBeInstanceOf(Date);
  });
});

describe("sorts and pages", () => {
  it("every install appears exactly once across the pages, though thousands share a created_at", async () => {
    // storeBulkInstalls writes 2,000 rows per statement, all with the same created_at: the row id breaks the tie.
    const [{ ties }] = (await sql<{ ties: number }>("SELECT max(n)::int AS ties FROM (SELECT count(*) AS n FROM installs GROUP BY created_at) t")) as [{ ties: number }];
    expect(ties).toBeGreaterThanOrEqual(1_000);
    const seen: string[] = [];
    for (let page = 0; page < TOTAL / 100; page += 1) seen.push(...ids(await fetchInstallList(query({ page: String(page), perPage: "100" }))));
    expect(seen).toHaveLength(TOTAL);
    expect(new Set(seen).size).toBe(TOTAL);
  }, scaled(60_000));

  it("each sort puts what staff look for first", async () => {
    expect((await fetchInstallList(query({ sort: "expiry" }))).items[0]!.id).toBe(known.refreshExpiring);
    expect((await fetchInstallList(query({ sort: "changed" }))).items.slice(0, 2).map((i) => i.id).sort()).toEqual([known.uninstalled, known.flagged].sort());
    const operator = (await fetchInstallList(query({ sort: "operator", perPage: "25" }))).items.map((i) => i.operatorName);
    expect(operator.slice(0, 3)).toEqual(["Bulk Operator 1", "Bulk Operator 10", "Bulk Operator 100"]);
    // Stalest first: the installs with no complete copy, then the lagging one before the fresh ones.
    const synced = await fetchInstallList(query({ sort: "synced", sync: "lagging" }));
    expect(ids(synced)).toEqual([known.lagging]);
    const fresh = (await fetchInstallList(query({ sort: "synced", page: String(TOTAL / 25 - 1) }))).items.map((i) => i.id);
    expect(fresh.slice(-4)).toEqual([known.lagging, known.failing, known.upToDate, known.recovered]);
    // The first ten were stored by one statement (one created_at): they come first, in row id order.
    const oldest = await fetchInstallList(query({ sort: "oldest", perPage: "25" }));
    expect(ids(oldest).slice(0, FIRST)).toEqual(rowIds.slice(0, FIRST).sort());
  });
});

describe("the page over HTTP", () => {
  let cookie = "";
  beforeAll(async () => {
    const result = await signInStaffWithFetch(process.env.STAFF_DEV_EMAIL!, process.env.STAFF_DEV_PASSWORD!);
    expect(result.outcome).toBe("ok");
    cookie = result.sessionCookie!;
  });

  const visit = async (path: string) => {
    const response = await fetch(`${stack.appUrl}${path}`, { headers: { cookie }, redirect: "manual" });
    return { status: response.status, html: await response.text() };
  };
  const rows = (html: string) => [...html.matchAll(/<tr[^>]*data-install-row="([0-9a-f-]{36})"/g)].map((m) => m[1]!);

  it("a bad query string gives the default page, not an error", async () => {
    const expected = ids(await fetchInstallList(DEFAULT_QUERY));
    for (const path of [
      "/admin?page=-1&perPage=7&sort=drop%20table&state=ANY&token=%00&sync=%E2%80%AE",
      "/admin?page=1e99&perPage=100000",
      "/admin?page=abc&page=2&q=",
      `/admin?q=${encodeURIComponent("\u0000\u0001")}`,
    ]) {
      const page = await visit(path);
      expect(page.status, path).toBe(200);
      expect(rows(page.html), path).toEqual(expected);
    }
  });

  it("a search over HTTP shows the one install it finds, and the count that match", async () => {
    const page = await visit(`/admin?q=${encodeURIComponent("Ładowarki")}`);
    expect(page.status).toBe(200);
    expect(rows(page.html)).toEqual([known.named]);
    expect(page.html).toMatch(/data-testid="count-matching">1</);
    expect(page.html).toContain(`href="/admin/installs/${known.named}"`);
    // The list reads token timings only: neither the sealed tokens nor anything of them reach the page.
    const [grant] = await sql<{ access_token_encrypted: string; refresh_token_encrypted: string }>(
      "SELECT access_token_encrypted, refresh_token_encrypted FROM token_grants WHERE install_row_id = $1",
      [known.named],
    );
    expect(page.html).not.toContain(grant!.access_token_encrypted);
    expect(page.html).not.toContain(grant!.refresh_token_encrypted);
    expect(page.html).not.toContain(grant!.access_token_encrypted.slice(-24));
    const none = await visit("/admin?q=nothing-matches-this");
    expect(none.html).toContain('data-testid="installs-no-match"');
  });

  it("a row reaches the browser once, as HTML, with only the strings it shows in the page's payload", async () => {
    const hundred = await visit("/admin?perPage=100");
    const quarter = await visit("/admin?perPage=25");
    expect(rows(hundred.html)).toHaveLength(100);
    // The row's markup (its test ids, its class names) is in the HTML and nowhere else: the React
    // payload the page carries holds the row's strings, not a second copy of its elements.
    expect(hundred.html.split("install-link").length - 1).toBe(100);
    expect(hundred.html.split("font-mono text-brand-700").length - 1).toBe(100);
    // What one row costs the page, HTML and payload together (75 rows more, same page otherwise).
    const perRow = (Buffer.byteLength(hundred.html) - Buffer.byteLength(quarter.html)) / 75;
    expect(perRow, `${perRow.toFixed(0)} bytes a row`).toBeLessThan(BYTES_PER_ROW);
  });
});
