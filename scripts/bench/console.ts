// `npm run bench -- console`: the staff console's install list at many installs.
import { performance } from "node:perf_hooks";
import { type BenchContext, appCpuPerRequest, concurrently, summary } from "./lib";
import { bulkInstalls, closeSql, sql, storeBulkInstalls } from "../../tests/helpers/stack";
import { signInStaffWithFetch } from "../../tests/helpers/staff-sign-in";

/**
 * The console section (issue 14): CONSOLE_INSTALLS installs (BENCH_CONSOLE_INSTALLS, default 10,000), each
 * page of the staff console's list asked for CONSOLE_REQUESTS times, CONSOLE_CONCURRENCY at a time.
 */
const CONSOLE_INSTALLS = Number(process.env.BENCH_CONSOLE_INSTALLS ?? 10_000);
if (!Number.isInteger(CONSOLE_INSTALLS) || CONSOLE_INSTALLS < 100 || CONSOLE_INSTALLS > 20_000) {
  console.error("bench: BENCH_CONSOLE_INSTALLS must be a whole number from 100 to 20000");
  process.exit(2);
}
const CONSOLE_REQUESTS = 60;
/** Syncs of each install kept in sync_runs for the console section: 96 = one day at the default 15 minutes. */
const CONSOLE_SYNCS_KEPT = 96;
const CONSOLE_CONCURRENCY = 4;

export async function staffConsole({ stack }: BenchContext) {
  // The staff console's install list (issue 14) at CONSOLE_INSTALLS installs: the sandbox makes them in
  // one call, they are stored straight into the app's tables (with the names and slugs the sandbox gives
  // its bulk operators), and a signed-in staff member asks for the list's pages, a few at a time.
  // The page reads two queries whatever the number of installs (lib/admin/install-list.ts).
  console.log(`\n== staff console install list (${CONSOLE_INSTALLS.toLocaleString("en-US")} installs; ${CONSOLE_REQUESTS} requests per page, ${CONSOLE_CONCURRENCY} at a time) ==`);
  const t0 = performance.now();
  await storeBulkInstalls(await bulkInstalls({ count: CONSOLE_INSTALLS, charges: 0 }));
  await sql(
    `UPDATE installs SET operator_name = 'Bulk Operator ' || (operator_id::int - 100000), slug = 'bulk-operator-' || (operator_id::int - 100000)
     WHERE operator_id::bigint > 100000`,
  );
  // The sync's tables as a day of syncing leaves them (lib/sync): a checkpoint per resource per install
  // (2% of them lagging by two hours), and the last CONSOLE_SYNCS_KEPT syncs' runs of each install, one
  // run per resource, every SYNC_INTERVAL_MINUTES; 1% of installs' latest sync failed at one resource.
  const { env: appEnv } = await import("../../lib/env");
  const interval = appEnv().SYNC_INTERVAL_MINUTES;
  // The registered resources (lib/sync/resources.ts); the failing one is the last, the longest list.
  const resources = (await import("../../lib/sync/resources")).SYNCED_RESOURCES.map((resource) => resource.name);
  await sql(
    `INSERT INTO sync_checkpoints (install_row_id, resource, next_page, per_page, last_pass_ended_at, last_full_pass_ended_at, updated_at)
     SELECT i.id, r.resource, 0, 100, now() - CASE WHEN random() < 0.02 THEN interval '2 hours' ELSE make_interval(mins => (random() * $1)::int) END, now(), now()
     FROM installs i CROSS JOIN unnest($2::text[]) AS r(resource) WHERE i.operator_id::bigint > 100000`,
    [interval, resources],
  );
  await sql(
    `INSERT INTO sync_runs (id, install_row_id, resource, started_at, finished_at, outcome)
     SELECT gen_random_uuid(), i.id, r.resource, now() - make_interval(mins => s * $1), now() - make_interval(mins => s * $1),
            CASE WHEN s = 0 AND r.resource = $3 AND hashtext(i.id::text) % 100 = 0 THEN 'failed' ELSE 'completed' END
     FROM installs i CROSS JOIN unnest($4::text[]) AS r(resource) CROSS JOIN generate_series(0, $2::int - 1) AS s
     WHERE i.operator_id::bigint > 100000`,
    [interval, CONSOLE_SYNCS_KEPT, resources.at(-1), resources],
  );
  await sql("ANALYZE installs, token_grants, sync_checkpoints, sync_runs");
  const [{ installs: total, runs }] = (await sql<{ installs: number; runs: number }>(
    "SELECT (SELECT count(*)::int FROM installs) AS installs, (SELECT count(*)::int FROM sync_runs) AS runs",
  )) as [{ installs: number; runs: number }];
  const [target] = await sql<{ operator_id: string }>("SELECT operator_id FROM installs WHERE operator_id::bigint > 100000 ORDER BY operator_id DESC LIMIT 1");
  console.log(
    `${"setup".padEnd(44)} ${total.toLocaleString("en-US")} installs and ${runs.toLocaleString("en-US")} sync runs stored in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  // The plans: each page's statements as lib/admin/install-list.ts sends them (captured from Prisma's
  // query events), run again under EXPLAIN ANALYZE: execution time, and the indexes each one reads.
  const { fetchInstallList, parseInstallListQuery } = await import("../../lib/admin/install-list");
  const { PrismaClient } = await import("../../lib/db/generated/client");
  const { PrismaPg } = await import("@prisma/adapter-pg");
  const capturing = new PrismaClient({ adapter: new PrismaPg({ connectionString: stack.env.DATABASE_URL! }), log: [{ emit: "event", level: "query" }] });
  const statements: { query: string; params: string }[] = [];
  capturing.$on("query", (event) => statements.push({ query: event.query, params: event.params }));
  type PlanNode = { "Node Type": string; "Index Name"?: string; Plans?: PlanNode[] };
  const indexesOf = (node: PlanNode): string[] => [...(node["Index Name"] ? [node["Index Name"]] : []), ...(node.Plans ?? []).flatMap(indexesOf)];
  const seqScans = (node: PlanNode): number => (node["Node Type"] === "Seq Scan" ? 1 : 0) + (node.Plans ?? []).reduce((n, p) => n + seqScans(p), 0);
  const explainPage = async (label: string, params: Record<string, string>) => {
    statements.length = 0;
    await fetchInstallList(parseInstallListQuery(params), { client: capturing });
    const figures: string[] = [];
    for (const statement of statements) {
      const [row] = await sql<{ "QUERY PLAN": { Plan: PlanNode; "Execution Time": number }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.query}`, JSON.parse(statement.params) as unknown[]);
      const [plan] = row!["QUERY PLAN"];
      const indexes = [...new Set(indexesOf(plan!.Plan))];
      // The two statements run at once, so their events come in either order: the page's starts with its CTE.
      const kind = /^\s*WITH page/.test(statement.query) ? "page" : "counts";
      figures.push(`${kind} ${plan!["Execution Time"].toFixed(1)} ms (seq scans ${seqScans(plan!.Plan)}; ${indexes.join(", ") || "no index"})`);
    }
    console.log(`${`plan: ${label}`.padEnd(44)} ${statements.length} statements: ${figures.join("; ")}`);
  };

  const staff = await signInStaffWithFetch(stack.env.STAFF_DEV_EMAIL!, stack.env.STAFF_DEV_PASSWORD!, { appUrl: stack.env.APP_URL });
  if (staff.outcome !== "ok") throw new Error(`bench: staff sign-in failed: ${staff.outcome}`);
  const lastPage = Math.ceil(total / 25) - 1;
  const pages: [string, string][] = [
    ["first page (newest, 25)", "/admin"],
    ["search: one operator id", `/admin?q=${target!.operator_id}`],
    ["search: a name fragment", `/admin?q=${encodeURIComponent("operator 4242")}`],
    ["filtered: sync failing", "/admin?sync=failing"],
    ["filtered: ACTIVE, healthy tokens, 100", "/admin?state=ACTIVE&token=healthy&perPage=100"],
    ["sorted: last sync (stalest first)", "/admin?sort=synced"],
    [`deep page: the last (${lastPage + 1} of 25)`, `/admin?page=${lastPage}`],
  ];
  for (const [label, pagePath] of pages) await explainPage(label, Object.fromEntries(new URL(pagePath, "http://x").searchParams));
  await capturing.$disconnect();
  for (const [label, pagePath] of pages) {
    const samples: number[] = [];
    let failed = 0;
    let bytes = 0;
    const get = async (timed: boolean) => {
      const started = performance.now();
      const response = await fetch(`${stack.env.APP_URL}${pagePath}`, { headers: { cookie: staff.sessionCookie! } });
      const html = await response.text();
      if (timed) samples.push(performance.now() - started);
      bytes = Buffer.byteLength(html);
      if (response.status !== 200 || !html.includes('data-testid="count-total"')) failed += 1;
    };
    await concurrently(CONSOLE_CONCURRENCY, CONSOLE_CONCURRENCY, () => get(false)); // the first round warms the server
    // Three blocks of a third of the requests each: the app's CPU per page of each, and the latency of all.
    const block = CONSOLE_REQUESTS / 3;
    await appCpuPerRequest(label, stack.appPid, block, () => concurrently(block, CONSOLE_CONCURRENCY, () => get(true)));
    // What the browser is sent: the HTML with the React payload it carries (the rows' markup and props).
    console.log(`${"".padEnd(44)} ${(bytes / 1024).toFixed(1)} KiB of HTML`);
    summary(`GET ${label}`, samples);
    if (failed > 0) console.log(`${"".padEnd(44)} failed pages=${failed}`);
  }
  await closeSql();
}
