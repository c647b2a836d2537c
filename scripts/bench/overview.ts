// `npm run bench -- overview`: GET /dashboard for the large operator, over its local copy.
import { performance } from "node:perf_hooks";
import { type BenchContext, REPS, appCpuMs, appCpuPerRequest, concurrently, loadAverage, printVerdict, summary } from "./lib";
import { LOCALE_COOKIE, ZONE_COOKIE } from "../../lib/i18n/cookies";
import { closeSql, sql } from "../../tests/helpers/stack";

export async function overview({ stack, syncedLargeOperator }: BenchContext) {
  // The Overview (issue 13, lib/dashboard/overview.ts): GET /dashboard for the large operator
  // (20,000 charges, 500 charge points) once its copy is synced, as the operator's browser asks
  // for it, OVERVIEW_REQUESTS times, OVERVIEW_CONCURRENCY at a time, for three ranges. The page
  // reads only the local copy (SQL aggregates per UTC day), so no request reaches the service.
  const OVERVIEW_REQUESTS = 200;
  const OVERVIEW_CONCURRENCY = 4;
  console.log(`\n== overview (GET /dashboard for the large operator, ${OVERVIEW_REQUESTS} requests per range, ${OVERVIEW_CONCURRENCY} at a time, after a full sync) ==`);
  const { install, synced } = await syncedLargeOperator();
  const [copy] = await sql<{ charges: number; charge_points: number }>(
    `SELECT (SELECT count(*)::int FROM synced_charges WHERE install_row_id = $1) AS charges,
            (SELECT count(*)::int FROM synced_charge_points WHERE install_row_id = $1) AS charge_points`,
    [install.installRowId],
  );
  console.log(`${"sync".padEnd(44)} ${synced.outcome}: ${copy!.charges.toLocaleString("en-US")} charges, ${copy!.charge_points} charge points in the copy`);
  // The plan of the daily aggregate over 90 days: it should be an index scan on (install_row_id, started_at).
  const plan = await sql<{ "QUERY PLAN": string }>(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
     SELECT to_char(date_trunc('day', started_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, currency, count(*), sum(consumed_kwh), sum(price)
     FROM synced_charges
     WHERE install_row_id = $1 AND deleted_at IS NULL
       AND started_at >= (SELECT max(started_at) FROM synced_charges WHERE install_row_id = $1) - interval '90 days'
     GROUP BY date_trunc('day', started_at AT TIME ZONE 'UTC'), currency`,
    [install.installRowId],
  );
  console.log("  plan of the 90-day aggregate:");
  for (const line of plan) console.log(`    ${line["QUERY PLAN"]}`);
  for (const [name, query] of [
    ["GET /dashboard (30 days, the default)", ""],
    ["GET /dashboard?days=90", "?days=90"],
    ["GET /dashboard, a whole year (custom)", "?from=2025-01-01&to=2025-12-31"],
  ] as const) {
    const samples: number[] = [];
    let failed = 0;
    const get = async (timed: boolean) => {
      const started = performance.now();
      const response = await fetch(`${stack.env.APP_URL}/dashboard${query}`, { headers: { cookie: install.sessionCookie } });
      const html = await response.text();
      if (timed) samples.push(performance.now() - started);
      if (response.status !== 200 || !html.includes('data-testid="headline-sessions"')) failed += 1;
    };
    await concurrently(10, OVERVIEW_CONCURRENCY, () => get(false)); // the first ten warm the server
    // Three blocks of a third of the requests each: the app's CPU per page of each, and the latency of all.
    const block = Math.round(OVERVIEW_REQUESTS / 3);
    await appCpuPerRequest(name, stack.appPid, block, () => concurrently(block, OVERVIEW_CONCURRENCY, () => get(true)));
    summary(name, samples);
    console.log(`${"".padEnd(44)} failed pages=${failed}`);
  }

  // What the operator's language and zone cost (issue 34: 16-25 ms of app CPU per page against 6-8 ms
  // before they landed): the default page for a Norwegian operator (nb, Oslo time, chosen on
  // "Settings and access") against the same page with English and UTC forced the same way, in
  // alternating blocks of one run, so the load is the same for both. Target: within 10 %.
  const TWIN_BLOCK = 80;
  const twins = { norwegian: `${LOCALE_COOKIE}=nb; ${ZONE_COOKIE}=Europe%2FOslo`, english: `${LOCALE_COOKIE}=en; ${ZONE_COOKIE}=UTC` };
  const cpu: Record<keyof typeof twins, number[]> = { norwegian: [], english: [] };
  for (const [twin, cookies] of Object.entries(twins) as [keyof typeof twins, string][]) {
    const html = await (await fetch(`${stack.env.APP_URL}/dashboard`, { headers: { cookie: `${install.sessionCookie}; ${cookies}` } })).text();
    if (!html.includes(twin === "norwegian" ? 'lang="nb-NO"' : 'lang="en-GB"')) throw new Error(`bench: the ${twin} twin's page is not in its language`);
    await concurrently(10, OVERVIEW_CONCURRENCY, async () => {
      await (await fetch(`${stack.env.APP_URL}/dashboard`, { headers: { cookie: `${install.sessionCookie}; ${cookies}` } })).text();
    });
  }
  // Each repetition alternates the twins in TWIN_ROUNDS short blocks, so a change of the machine's load
  // during it weighs on both alike.
  const TWIN_ROUNDS = 4;
  for (let rep = 0; rep < REPS; rep++) {
    const spent = { norwegian: 0, english: 0 };
    for (let round = 0; round < TWIN_ROUNDS; round++) {
      for (const [twin, cookies] of Object.entries(twins) as [keyof typeof twins, string][]) {
        const before = appCpuMs(stack.appPid);
        await concurrently(TWIN_BLOCK / TWIN_ROUNDS, OVERVIEW_CONCURRENCY, async () => {
          const response = await fetch(`${stack.env.APP_URL}/dashboard`, { headers: { cookie: `${install.sessionCookie}; ${cookies}` } });
          await response.text();
          if (response.status !== 200) throw new Error(`bench: GET /dashboard (${twin}): HTTP ${response.status}`);
        });
        spent[twin] += appCpuMs(stack.appPid) - before;
      }
    }
    for (const twin of Object.keys(twins) as (keyof typeof twins)[]) cpu[twin].push(spent[twin] / TWIN_BLOCK);
  }
  for (const twin of Object.keys(twins) as (keyof typeof twins)[]) {
    const sorted = [...cpu[twin]].sort((a, b) => a - b);
    console.log(`${`app CPU: GET /dashboard, ${twin === "norwegian" ? "Norwegian operator (nb, Oslo)" : "English+UTC forced"}`.padEnd(44)} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2).padStart(8)} ms/request (median of ${REPS} x ${TWIN_BLOCK}; range ${sorted[0]!.toFixed(2)}-${sorted.at(-1)!.toFixed(2)})  load ${loadAverage()}`);
  }
  printVerdict("ratio, same run: Norwegian / English+UTC, app CPU", cpu.norwegian.map((ms, i) => ms / cpu.english[i]!), { max: 1.1 }, 2, 44);
  await closeSql();
}
