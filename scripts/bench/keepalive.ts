// `npm run bench -- keepalive`: keep-alive's fan-out over many installs all due at once, by one worker and by two.
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { BenchContext } from "./lib";
import { startProcess, stopProcess } from "../lib/processes";
import { bulkInstalls, closeSql, control, sql, storeBulkInstalls } from "../../tests/helpers/stack";

/**
 * The keep-alive section (issue 12): BENCH_KEEPALIVE_INSTALLS installs (default 10,000) made by the
 * sandbox in one call and stored straight into the app's database, all due at once, then refreshed by
 * one worker process and by two, each for BENCH_KEEPALIVE_SECONDS (default 60) of measuring time.
 */
const KEEPALIVE_INSTALLS = Number(process.env.BENCH_KEEPALIVE_INSTALLS ?? 10_000);
if (!Number.isInteger(KEEPALIVE_INSTALLS) || KEEPALIVE_INSTALLS < 100 || KEEPALIVE_INSTALLS > 20_000) {
  console.error("bench: BENCH_KEEPALIVE_INSTALLS must be a whole number from 100 to 20000");
  process.exit(2);
}
const KEEPALIVE_SECONDS = Number(process.env.BENCH_KEEPALIVE_SECONDS ?? 60);
if (!Number.isInteger(KEEPALIVE_SECONDS) || KEEPALIVE_SECONDS < 10 || KEEPALIVE_SECONDS > 600) {
  console.error("bench: BENCH_KEEPALIVE_SECONDS must be a whole number of seconds from 10 to 600");
  process.exit(2);
}
/**
 * The identity provider's latency for keep-alive (BENCH_KEEPALIVE_IDP_LATENCY_MS, default 200 ms): a
 * token endpoint such as Ory Hydra's checks the client secret (a deliberately slow hash) and writes the
 * new pair before it answers, plus the network. The storm section's 1 s is its worst case, not the
 * everyday figure keep-alive's throughput depends on.
 */
const KEEPALIVE_IDP_LATENCY_MS = Number(process.env.BENCH_KEEPALIVE_IDP_LATENCY_MS ?? 200);
if (!Number.isInteger(KEEPALIVE_IDP_LATENCY_MS) || KEEPALIVE_IDP_LATENCY_MS < 0 || KEEPALIVE_IDP_LATENCY_MS > 10_000) {
  console.error("bench: BENCH_KEEPALIVE_IDP_LATENCY_MS must be a whole number of milliseconds from 0 to 10000");
  process.exit(2);
}

export async function keepalive({ stack, dataDir }: BenchContext) {
  // Keep-alive's fan-out (lib/jobs/) at the issue's scale: KEEPALIVE_INSTALLS installs, every grant
  // due at once, refreshed by one worker process and then by two (the real `npm run worker` entry
  // point, keep-alive jobs only, KEEP_ALIVE_CONCURRENCY each), against the sandbox's identity provider
  // holding each refresh KEEPALIVE_IDP_LATENCY_MS. Each run is measured for a fixed time from the
  // fan-out's first job: the grants refreshed by then, per minute. The due state is reset in between.
  // Targets: two workers clearly faster than one; 0 chain revocations; 0 failed jobs; none refreshed twice.
  const { keepAliveDueQuery, KEEP_ALIVE_HORIZON_MS } = await import("../../lib/jobs/keep-alive");
  const { env: appEnv } = await import("../../lib/env");
  const { KEEP_ALIVE_CONCURRENCY, REFRESH_CONCURRENCY } = appEnv();
  console.log(
    `\n== keep-alive fan-out (${KEEPALIVE_INSTALLS.toLocaleString("en-US")} installs all due at once; identity provider latency ${KEEPALIVE_IDP_LATENCY_MS} ms;` +
      ` ${KEEPALIVE_SECONDS} s measured per run; KEEP_ALIVE_CONCURRENCY=${KEEP_ALIVE_CONCURRENCY}, REFRESH_CONCURRENCY=${REFRESH_CONCURRENCY} per worker) ==`,
  );
  const t0 = performance.now();
  const bulk = await bulkInstalls({ count: KEEPALIVE_INSTALLS, charges: 0 });
  const t1 = performance.now();
  const installs = await storeBulkInstalls(bulk);
  const t2 = performance.now();
  console.log(
    `${"setup".padEnd(44)} the sandbox made ${bulk.length.toLocaleString("en-US")} installs in ${((t1 - t0) / 1000).toFixed(1)} s;` +
      ` stored in the app's database (sealed tokens) in ${((t2 - t1) / 1000).toFixed(1)} s`,
  );

  // The fan-out's due query on this many grants, EXPLAINed: a normal hour (1% due) and this run's (all due).
  type PlanNode = { "Node Type": string; "Index Name"?: string; "Relation Name"?: string; Plans?: PlanNode[] };
  const gist = (node: PlanNode): string =>
    `${node["Node Type"]}${node["Index Name"] ? ` using ${node["Index Name"]}` : node["Relation Name"] ? ` on ${node["Relation Name"]}` : ""}` +
    (node.Plans?.length ? ` (${node.Plans.map(gist).join(", ")})` : "");
  const explainDue = async (label: string) => {
    await sql("ANALYZE installs, token_grants");
    const query = keepAliveDueQuery(new Date());
    const [row] = await sql<{ "QUERY PLAN": { Plan: PlanNode; "Execution Time": number }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`, query.values);
    const [plan] = row!["QUERY PLAN"];
    console.log(`${`due query, ${label}`.padEnd(44)} ${plan!["Execution Time"].toFixed(1)} ms: ${gist(plan!.Plan)}`);
  };
  const resetDue = (fraction: number) =>
    sql(
      `UPDATE token_grants SET refresh_token_expires_at = now() + CASE WHEN random() < $2 THEN interval '1 day' ELSE interval '29 days' END
       WHERE install_row_id = ANY($1::uuid[])`,
      [installs, fraction],
    );
  await resetDue(0.01);
  await explainDue(`1% of ${KEEPALIVE_INSTALLS.toLocaleString("en-US")} due`);

  type TokenStats = { calls: { refresh_token: number }; chain_revocations: number };
  const perMinute: number[] = [];
  for (const workerCount of [1, 2]) {
    await sql("TRUNCATE pgboss.job");
    await resetDue(1);
    if (workerCount === 1) await explainDue(`all ${KEEPALIVE_INSTALLS.toLocaleString("en-US")} due`);
    if (KEEPALIVE_IDP_LATENCY_MS > 0) await control("POST", "/faults", { tokenEndpoint: { mode: "delay", count: 100_000, delayMs: KEEPALIVE_IDP_LATENCY_MS } });
    const before = await control<TokenStats>("GET", "/token-stats");
    const versionsBefore = new Map(
      (await sql<{ install_row_id: string; version: number }>("SELECT install_row_id, version FROM token_grants WHERE install_row_id = ANY($1::uuid[])", [installs])).map((r) => [r.install_row_id, r.version]),
    );
    const workerProcesses = Array.from({ length: workerCount }, (_, n) =>
      startProcess(`bench-worker-${n}`, path.resolve("node_modules/.bin/tsx"), ["--conditions=react-server", "scripts/worker.ts"], {
        // Keep-alive only: the sweep and the syncs would share the workers otherwise.
        env: { ...stack.env, LOG_LEVEL: "warn", WORKER_JOBS: "keep-alive" },
        quiet: true,
        logFile: path.join(dataDir, "logs", `keep-alive-${workerCount}-worker-${n}.log`),
      }),
    );
    // The clock starts with the fan-out's first job (a worker's start-up is not keep-alive's work).
    let started: Date | null = null;
    const waitUntil = Date.now() + 120_000;
    while (!started && Date.now() < waitUntil) {
      started = (await sql<{ at: Date | null }>("SELECT min(created_on) AS at FROM pgboss.job WHERE name = 'keep-alive.install'"))[0]!.at;
      if (!started) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!started) throw new Error("bench: no keep-alive job was enqueued within 2 minutes of the workers' start");
    const [{ wait }] = (await sql<{ wait: number }>("SELECT extract(epoch FROM ($1::timestamptz + make_interval(secs => $2) - now()))::float8 * 1000 AS wait", [started, KEEPALIVE_SECONDS])) as [{ wait: number }];
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
    // Grants stored with a fresh 30-day expiry by the end of the measuring time.
    const [{ refreshed }] = (await sql<{ refreshed: number }>(
      "SELECT count(*)::int AS refreshed FROM token_grants WHERE install_row_id = ANY($1::uuid[]) AND refresh_token_expires_at > now() + interval '20 days'",
      [installs],
    )) as [{ refreshed: number }];
    const [fanOut] = await sql<{ jobs: number; seconds: number }>(
      "SELECT count(*)::int AS jobs, extract(epoch FROM max(created_on) - min(created_on))::float8 AS seconds FROM pgboss.job WHERE name = 'keep-alive.install'",
    );
    // SIGTERM: the workers finish the refreshes in hand, then exit (0; 1 if the shutdown bound was hit).
    const stopStarted = performance.now();
    await Promise.all(workerProcesses.map((worker) => stopProcess(worker, 40_000)));
    const stopped = { seconds: (performance.now() - stopStarted) / 1000, codes: await Promise.all(workerProcesses.map((worker) => worker.exited)) };
    await control("DELETE", "/faults");
    const after = await control<TokenStats>("GET", "/token-stats");
    const [failures] = await sql<{ retrying: number; failed: number; dead: number; active: number; leftMarkers: number }>(
      `SELECT (SELECT count(*)::int FROM pgboss.job WHERE name = 'keep-alive.install' AND state = 'retry') AS retrying,
              (SELECT count(*)::int FROM pgboss.job WHERE name = 'keep-alive.install' AND state = 'failed') AS failed,
              (SELECT count(*)::int FROM pgboss.job WHERE name = 'keep-alive.install.dead-letter') AS dead,
              (SELECT count(*)::int FROM pgboss.job WHERE name = 'keep-alive.install' AND state = 'active') AS active,
              (SELECT count(*)::int FROM token_grants WHERE install_row_id = ANY($1::uuid[]) AND refresh_started_at IS NOT NULL) AS "leftMarkers"`,
      [installs],
    );
    const versionsAfter = await sql<{ install_row_id: string; version: number }>("SELECT install_row_id, version FROM token_grants WHERE install_row_id = ANY($1::uuid[])", [installs]);
    const twice = versionsAfter.filter((r) => r.version > versionsBefore.get(r.install_row_id)! + 1).length;
    const rate = (refreshed / KEEPALIVE_SECONDS) * 60;
    perMinute.push(rate);
    const allMinutes = KEEPALIVE_INSTALLS / rate;
    console.log(
      `${`${workerCount} worker${workerCount > 1 ? "s" : ""}`.padEnd(44)} ${refreshed.toLocaleString("en-US")} refreshed in ${KEEPALIVE_SECONDS} s = ${Math.round(rate).toLocaleString("en-US")} installs/min` +
        `  (fan-out: ${fanOut!.jobs.toLocaleString("en-US")} jobs enqueued in ${fanOut!.seconds.toFixed(1)} s)`,
    );
    console.log(
      `${"".padEnd(44)} refresh calls=${after.calls.refresh_token - before.calls.refresh_token}  chain revocations=${after.chain_revocations - before.chain_revocations} (target 0)` +
        `  failed jobs: retrying=${failures!.retrying} failed=${failures!.failed} dead letters=${failures!.dead} (target 0)  refreshed more than once=${twice}`,
    );
    // After SIGTERM: no job left active and no refresh of unknown outcome (its marker still set).
    console.log(
      `${"".padEnd(44)} stopped in ${stopped.seconds.toFixed(1)} s, exit codes ${stopped.codes.join(",")}: jobs left active=${failures!.active}  refresh markers left=${failures!.leftMarkers} (target 0)`,
    );
    console.log(
      `${"".padEnd(44)} all ${KEEPALIVE_INSTALLS.toLocaleString("en-US")} at this rate: ${allMinutes.toFixed(1)} min = ${((allMinutes * 60_000 * 100) / KEEP_ALIVE_HORIZON_MS).toFixed(2)}% of the` +
        ` ${KEEP_ALIVE_HORIZON_MS / 86_400_000}-day keep-alive horizon before the 30-day expiry (contract §8)`,
    );
  }
  console.log(`${"two workers / one".padEnd(44)} ${(perMinute[1]! / perMinute[0]!).toFixed(2)} (target clearly above 1)`);
  await closeSql();
}
