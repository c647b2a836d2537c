// `npm run bench -- console`: the staff console's install list at exactly 1,000 and then exactly
// 10,000 installs, with a day of sync history each.
//
// The section starts from no installs at all (it empties the installs the earlier sections made), so
// the list's counts are exactly the installs it names. At each size it prints, for every page, the
// p50 and p99 over BENCH_REPS repetitions as the median (min-max) with the load average beside it,
// then the database's own time for each page's two statements (EXPLAIN ANALYZE, the same
// repetitions) and the indexes they read, and the target: the "sync failing" filter within 1.5× of
// the first page, a ratio taken within each repetition.
import { performance } from "node:perf_hooks";
import { type BenchContext, REPS, appCpuMs, loadNow, median, percentile, printSpread, printVerdict } from "./lib";
import { bulkInstalls, closeSql, sql, storeBulkInstalls } from "../../tests/helpers/stack";
import { signInStaffWithFetch } from "../../tests/helpers/staff-sign-in";
import { refreshSyncSummaries } from "../../tests/helpers/sync-latest";

/** The install counts the section measures at, in this order (the second grows the first). */
const SIZES = [1_000, 10_000] as const;
/** Requests per page per repetition, CONSOLE_CONCURRENCY at a time (the first round warms the server and is not counted). */
const CONSOLE_REQUESTS = 40;
const CONSOLE_CONCURRENCY = 4;
/** Syncs of each install kept in sync_runs: 96 = one day at the default 15 minutes. */
const CONSOLE_SYNCS_KEPT = 96;
/** The target: the "sync failing" filter's p50 at most this many times the first page's, at each size. */
const FILTER_TARGET_RATIO = 1.5;

type PlanNode = { "Node Type": string; "Index Name"?: string; "Relation Name"?: string; Plans?: PlanNode[] };
const indexesOf = (node: PlanNode): string[] => [...(node["Index Name"] ? [node["Index Name"]] : []), ...(node.Plans ?? []).flatMap(indexesOf)];
const seqScansOf = (node: PlanNode): string[] => [...(node["Node Type"] === "Seq Scan" ? [node["Relation Name"] ?? "?"] : []), ...(node.Plans ?? []).flatMap(seqScansOf)];

/**
 * Adds installs until there are exactly `size`, with the sync's tables as a day of syncing leaves
 * them (lib/sync): a checkpoint per resource per install (2% of them lagging by two hours), the last
 * CONSOLE_SYNCS_KEPT syncs' runs of each install, one run per resource every SYNC_INTERVAL_MINUTES,
 * and each resource's latest outcome and the install's sync summary (sync_latest and installs, as
 * lib/sync/latest.ts writes them with each run's end); 1% of installs' latest sync failed at one resource.
 */
async function growTo(size: number) {
  const [{ installs: now }] = (await sql<{ installs: number }>("SELECT count(*)::int AS installs FROM installs")) as [{ installs: number }];
  const added = await storeBulkInstalls(await bulkInstalls({ count: size - now, charges: 0 }));
  // The names and slugs the sandbox gives its bulk operators, as a service that sends them would have had them stored.
  await sql(
    `UPDATE installs SET operator_name = 'Bulk Operator ' || (operator_id::int - 100000), slug = 'bulk-operator-' || (operator_id::int - 100000)
     WHERE id = ANY($1::uuid[])`,
    [added],
  );
  const { env: appEnv } = await import("../../lib/env");
  const interval = appEnv().SYNC_INTERVAL_MINUTES;
  // The registered resources (lib/sync/resources.ts); the failing one is the last, the longest list.
  const resources = (await import("../../lib/sync/resources")).SYNCED_RESOURCES.map((resource) => resource.name);
  await sql(
    `INSERT INTO sync_checkpoints (install_row_id, resource, next_page, per_page, last_pass_ended_at, last_full_pass_ended_at, updated_at)
     SELECT i, r.resource, 0, 100, now() - CASE WHEN random() < 0.02 THEN interval '2 hours' ELSE make_interval(mins => (random() * $1)::int) END, now(), now()
     FROM unnest($3::uuid[]) AS i CROSS JOIN unnest($2::text[]) AS r(resource)`,
    [interval, resources, added],
  );
  // One clock for the runs and the latest outcomes, so each latest outcome is its resource's newest run.
  const syncedAt = new Date();
  const outcome = (resourceParam: string) => `CASE WHEN s = 0 AND r.resource = ${resourceParam} AND hashtext(i::text) % 100 = 0 THEN 'failed' ELSE 'completed' END`;
  await sql(
    `INSERT INTO sync_runs (id, install_row_id, resource, started_at, finished_at, outcome)
     SELECT gen_random_uuid(), i, r.resource, $6::timestamptz - make_interval(mins => s * $1), $6::timestamptz - make_interval(mins => s * $1), ${outcome("$3")}
     FROM unnest($5::uuid[]) AS i CROSS JOIN unnest($4::text[]) AS r(resource) CROSS JOIN generate_series(0, $2::int - 1) AS s`,
    [interval, CONSOLE_SYNCS_KEPT, resources.at(-1), resources, added, syncedAt],
  );
  await sql(
    `INSERT INTO sync_latest (install_row_id, resource, started_at, finished_at, outcome)
     SELECT i, r.resource, $4::timestamptz, $4::timestamptz, ${outcome("$1")}
     FROM unnest($3::uuid[]) AS i CROSS JOIN unnest($2::text[]) AS r(resource) CROSS JOIN (VALUES (0)) AS latest(s)`,
    [resources.at(-1), resources, added, syncedAt],
  );
  // And each install's sync summary, as the same transaction writes it (lib/sync/latest.ts).
  await refreshSyncSummaries(added);
  await sql("ANALYZE installs, token_grants, sync_checkpoints, sync_runs, sync_latest");
}

export async function staffConsole({ stack }: BenchContext) {
  console.log(
    `\n== staff console install list at exactly ${SIZES.map((n) => n.toLocaleString("en-US")).join(" and ")} installs (a day of sync runs each);` +
      ` ${REPS} repetitions of ${CONSOLE_REQUESTS} requests per page, ${CONSOLE_CONCURRENCY} at a time; median (min-max) ==`,
  );
  // Its own fresh state: no install of an earlier section is counted (the list counts every install).
  await sql("TRUNCATE installs CASCADE");
  const { fetchInstallList, parseInstallListQuery } = await import("../../lib/admin/install-list");
  const { PrismaClient } = await import("../../lib/db/generated/client");
  const { PrismaPg } = await import("@prisma/adapter-pg");
  // The statements lib/admin/install-list.ts sends, captured from Prisma's query events, to run again under EXPLAIN ANALYZE.
  const capturing = new PrismaClient({ adapter: new PrismaPg({ connectionString: stack.env.DATABASE_URL! }), log: [{ emit: "event", level: "query" }] });
  const statements: { query: string; params: string }[] = [];
  capturing.$on("query", (event) => statements.push({ query: event.query, params: event.params }));

  const staff = await signInStaffWithFetch(stack.env.STAFF_DEV_EMAIL!, stack.env.STAFF_DEV_PASSWORD!, { appUrl: stack.env.APP_URL });
  if (staff.outcome !== "ok") throw new Error(`bench: staff sign-in failed: ${staff.outcome}`);

  for (const size of SIZES) {
    const t0 = performance.now();
    await growTo(size);
    const [counted] = (await sql<{ installs: number; runs: number; failing: number }>(
      `SELECT (SELECT count(*)::int FROM installs) AS installs, (SELECT count(*)::int FROM sync_runs) AS runs,
              (SELECT count(*)::int FROM sync_latest WHERE outcome = 'failed') AS failing`,
    )) as [{ installs: number; runs: number; failing: number }];
    if (counted.installs !== size) throw new Error(`bench: the console section has ${counted.installs} installs, not ${size}`);
    console.log(
      `\n-- ${size.toLocaleString("en-US")} installs: ${counted.runs.toLocaleString("en-US")} sync runs, ${counted.failing} installs whose latest sync failed;` +
        ` stored in ${((performance.now() - t0) / 1000).toFixed(1)} s --`,
    );
    const [target] = await sql<{ operator_id: string }>("SELECT operator_id FROM installs ORDER BY operator_id DESC LIMIT 1");
    const lastPage = Math.ceil(size / 25) - 1;
    const pages: [string, string][] = [
      ["first page (newest, 25)", "/admin"],
      ["filtered: sync failing", "/admin?sync=failing"],
      ["search: one operator id", `/admin?q=${target!.operator_id}`],
      ["search: a name fragment", `/admin?q=${encodeURIComponent("operator 42")}`],
      ["filtered: sync lagging", "/admin?sync=lagging"],
      ["filtered: ACTIVE, healthy tokens, 100", "/admin?state=ACTIVE&token=healthy&perPage=100"],
      ["sorted: last sync (stalest first)", "/admin?sort=synced"],
      [`deep page: the last (${lastPage + 1} of 25)`, `/admin?page=${lastPage}`],
    ];

    // Over HTTP, as staff ask: every page once per repetition, one after the other, so a ratio is taken within one repetition.
    const p50: Record<string, number[]> = {};
    const p99: Record<string, number[]> = {};
    const loads: Record<string, number[]> = {};
    // The app server's CPU per request (its own counters, /proc) and what the browser is sent: the
    // HTML with the React payload it carries (the rows' markup and props).
    const cpu: Record<string, number[]> = {};
    const kib: Record<string, number> = {};
    let failed = 0;
    for (let rep = 0; rep < REPS; rep++) {
      for (const [label, pagePath] of pages) {
        const samples: number[] = [];
        let next = 0;
        let cpuBefore = NaN;
        await Promise.all(
          Array.from({ length: CONSOLE_CONCURRENCY }, async () => {
            while (next < CONSOLE_REQUESTS + CONSOLE_CONCURRENCY) {
              const warm = next < CONSOLE_CONCURRENCY;
              next += 1;
              if (next === CONSOLE_CONCURRENCY + 1) cpuBefore = appCpuMs(stack.appPid);
              const started = performance.now();
              const response = await fetch(`${stack.env.APP_URL}${pagePath}`, { headers: { cookie: staff.sessionCookie! } });
              const html = await response.text();
              if (!warm) samples.push(performance.now() - started);
              kib[label] = Buffer.byteLength(html) / 1024;
              if (response.status !== 200 || !html.includes('data-testid="count-total"')) failed += 1;
            }
          }),
        );
        const sorted = samples.sort((a, b) => a - b);
        (p50[label] ??= []).push(percentile(sorted, 50));
        (p99[label] ??= []).push(percentile(sorted, 99));
        (loads[label] ??= []).push(loadNow());
        // The warm-up round's requests may still be finishing when the timed ones begin: a slight overcount.
        (cpu[label] ??= []).push((appCpuMs(stack.appPid) - cpuBefore) / CONSOLE_REQUESTS);
      }
    }
    for (const [label] of pages) {
      printSpread(`GET ${label}, p50`, p50[label]!, "ms", loads[label]!);
      printSpread(`GET ${label}, p99`, p99[label]!, "ms", loads[label]!);
      printSpread(`GET ${label}, app CPU per request (${kib[label]!.toFixed(1)} KiB sent)`, cpu[label]!, "ms", loads[label]!, 2);
    }
    if (failed > 0) console.log(`${"".padEnd(52)} failed pages=${failed}`);

    // In the database: each page's two statements under EXPLAIN ANALYZE, REPS times.
    const db: Record<string, { page: number[]; counts: number[]; loads: number[]; reads: string }> = {};
    for (let rep = 0; rep < REPS; rep++) {
      for (const [label, pagePath] of pages) {
        statements.length = 0;
        await fetchInstallList(parseInstallListQuery(Object.fromEntries(new URL(pagePath, "http://x").searchParams)), { client: capturing });
        const entry = (db[label] ??= { page: [], counts: [], loads: [], reads: "" });
        const reads: string[] = [];
        for (const statement of statements) {
          const [row] = await sql<{ "QUERY PLAN": { Plan: PlanNode; "Execution Time": number }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.query}`, JSON.parse(statement.params) as unknown[]);
          const [plan] = row!["QUERY PLAN"];
          // The two statements run at once, so their events come in either order: the page's starts with its CTE.
          const kind = /^\s*WITH page/.test(statement.query) ? "page" : "counts";
          entry[kind].push(plan!["Execution Time"]);
          const scans = [...new Set(seqScansOf(plan!.Plan))];
          reads.push(`${kind}: ${[...new Set(indexesOf(plan!.Plan))].join(", ") || "no index"}${scans.length ? `; seq scans ${scans.join(", ")}` : ""}`);
        }
        entry.loads.push(loadNow());
        entry.reads = reads.sort().reverse().join(" | ");
      }
    }
    console.log("in the database (EXPLAIN ANALYZE execution time):");
    for (const [label] of pages) {
      const entry = db[label]!;
      printSpread(`  ${label}: page statement`, entry.page, "ms", entry.loads, 2);
      printSpread(`  ${label}: counts statement`, entry.counts, "ms", entry.loads, 2);
      console.log(`${"".padEnd(54)}reads ${entry.reads}`);
    }

    // The target, within each repetition: the filter against the first page, over HTTP (p50) and in the database (both statements).
    const ratio = (a: number[], b: number[]) => a.map((value, i) => value / b[i]!);
    const first = pages[0]![0];
    const failing = pages[1]![0];
    const dbTotal = (label: string) => db[label]!.page.map((ms, i) => ms + db[label]!.counts[i]!);
    printVerdict(`ratio, same run: sync failing / first page, p50`, ratio(p50[failing]!, p50[first]!), { max: FILTER_TARGET_RATIO });
    printVerdict(`ratio, same run: the same, database time`, ratio(dbTotal(failing), dbTotal(first)), { max: FILTER_TARGET_RATIO });
    console.log(
      `${`absolute (this machine): sync failing p50`.padEnd(52)} ${median(p50[failing]!).toFixed(1)} ms, first page ${median(p50[first]!).toFixed(1)} ms;` +
        ` its counts statement ${median(db[failing]!.counts).toFixed(2)} ms`,
    );
  }
  await capturing.$disconnect();
  await closeSql();
}
