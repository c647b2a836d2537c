// `npm run bench -- storm`: many installs' access tokens expiring together under a slow identity provider.
//
// The refresh storm (issue 9): 50 installs whose access tokens expire together, 4 dashboards each
// fetched at once (200 pages), with a slow identity provider. Each page needs its install's refresh;
// refreshes run REFRESH_CONCURRENCY at a time and hold no pooled connection while they wait
// (lib/oauth/refresh-lock.ts).
//
// The target is relative to the same run, never a fixed time: the last page of the storm served
// within the baseline (the same 200 pages with fresh tokens, just before) plus the identity
// provider's latency (as the app measured it in that storm: its fastest refresh, from
// refresh_attempts). That is, the refreshes add at most one identity provider round trip to the
// storm, whatever the machine renders pages at. Each repetition (BENCH_REPS, at least 3) is a
// baseline and a storm side by side; every figure prints as the median (min-max) with the load.
import { performance } from "node:perf_hooks";
import { type BenchContext, REPS, STORM_INSTALLS, dashboardPageFailed, loadNow, printSpread, printVerdict } from "./lib";
import { closeSql, control, installViaPortal, sql } from "../../tests/helpers/stack";

/** The dashboards each install asks for at once. */
const STORM_PAGES_PER_INSTALL = 4;
/** The identity provider's latency during the storm (BENCH_IDP_LATENCY_MS, default 1 s): a `delay` fault of the sandbox's token endpoint. */
const STORM_IDP_LATENCY_MS = Number(process.env.BENCH_IDP_LATENCY_MS ?? 1_000);
if (!Number.isInteger(STORM_IDP_LATENCY_MS) || STORM_IDP_LATENCY_MS < 0 || STORM_IDP_LATENCY_MS > 120_000) {
  console.error("bench: BENCH_IDP_LATENCY_MS must be a whole number of milliseconds from 0 to 120000");
  process.exit(2);
}

type Stats = { calls: { refresh_token: number }; chain_revocations: number; max_refreshes_in_flight: number };
type Repetition = { baselineS: number; stormS: number; idpS: number; load: number };

export async function storm({ stack, startSecondApp }: BenchContext) {
  console.log(
    `\n== refresh storm (${STORM_INSTALLS} installs expiring together, ${STORM_PAGES_PER_INSTALL} dashboards each at once, identity provider delay ${STORM_IDP_LATENCY_MS} ms;` +
      ` ${REPS} repetitions, median (min-max)) ==`,
  );
  const installs: Awaited<ReturnType<typeof installViaPortal>>[] = [];
  for (let i = 0; i < STORM_INSTALLS; i++) installs.push(await installViaPortal(1004 + i));
  const installRowIds = installs.map((install) => install.installRowId);

  /**
   * All the pages at once: when the last was served (s from the start) and how many failed. With more
   * than one app process, an install's pages go to each in turn, so its refresh is contended across
   * processes too (one refresh per install across instances, lib/oauth/refresh-lock.ts).
   */
  const allPagesAtOnce = async (appUrls: string[]) => {
    let last = 0;
    let failed = 0;
    const started = performance.now();
    await Promise.all(
      installs.flatMap((install) =>
        Array.from({ length: STORM_PAGES_PER_INSTALL }, async (_, page) => {
          const response = await fetch(`${appUrls[page % appUrls.length]}/dashboard/charge-points`, { headers: { cookie: install.sessionCookie } });
          const html = await response.text();
          last = Math.max(last, performance.now() - started);
          if (dashboardPageFailed(response.status, html)) failed += 1;
        }),
      ),
    );
    return { lastS: last / 1000, failed };
  };

  /** REPS repetitions of: the baseline (fresh tokens), then the storm (every token expired, the identity provider slow). */
  const repeat = async (label: string, appUrls: string[]) => {
    await allPagesAtOnce(appUrls); // warms the server(s) and their connections
    const reps: Repetition[] = [];
    const failed = { baseline: 0, storm: 0 };
    let pages = 0;
    let tokenCalls = 0;
    let revocations = 0;
    let mostInFlight = 0;
    for (let rep = 0; rep < REPS; rep++) {
      const baseline = await allPagesAtOnce(appUrls);
      const stormStarted = new Date();
      await sql("UPDATE token_grants SET access_token_expires_at = now() - interval '1 minute' WHERE install_row_id = ANY($1)", [installRowIds]);
      const before = await control<Stats>("GET", "/token-stats");
      if (STORM_IDP_LATENCY_MS > 0) await control("POST", "/faults", { tokenEndpoint: { mode: "delay", count: STORM_INSTALLS, delayMs: STORM_IDP_LATENCY_MS } });
      const stormRun = await allPagesAtOnce(appUrls);
      const after = await control<Stats>("GET", "/token-stats");
      await control("DELETE", "/faults");
      // The identity provider's latency as the app met it in this storm: its fastest refresh (one that waited for no other).
      const [fastest] = await sql<{ ms: number | null }>(
        "SELECT min(duration_ms)::int AS ms FROM refresh_attempts WHERE install_row_id = ANY($1) AND COALESCE(last_attempted_at, attempted_at) >= $2 AND outcome = 'refreshed'",
        [installRowIds, stormStarted],
      );
      reps.push({ baselineS: baseline.lastS, stormS: stormRun.lastS, idpS: (fastest?.ms ?? NaN) / 1000, load: loadNow() });
      failed.baseline += baseline.failed;
      failed.storm += stormRun.failed;
      pages += installs.length * STORM_PAGES_PER_INSTALL;
      tokenCalls += after.calls.refresh_token - before.calls.refresh_token;
      revocations += after.chain_revocations - before.chain_revocations;
      mostInFlight = Math.max(mostInFlight, after.max_refreshes_in_flight);
    }
    const loads = reps.map((r) => r.load);
    console.log(`\n${label}:`);
    printSpread("absolute (this machine): baseline, last page after", reps.map((r) => r.baselineS), "s", loads, 2);
    printSpread("absolute (this machine): storm, last page after", reps.map((r) => r.stormS), "s", loads, 2);
    printSpread("absolute (this machine): identity provider, measured", reps.map((r) => r.idpS), "s", loads, 2);
    printSpread("absolute (this machine): what the refreshes added", reps.map((r) => r.stormS - r.baselineS), "s", loads, 2);
    // Target: storm <= baseline + identity provider latency, i.e. this ratio at most 1 in each repetition.
    printVerdict("ratio, same run: storm / (baseline + identity provider)", reps.map((r) => r.stormS / (r.baselineS + r.idpS)), { max: 1 });
    console.log(
      `${"".padEnd(52)} token calls=${tokenCalls} (${STORM_INSTALLS} per storm expected)  chain revocations=${revocations}` +
        `  failed pages: baseline ${failed.baseline} of ${pages}, storm ${failed.storm} of ${pages}  most refreshes at once=${mostInFlight}`,
    );
  };

  await repeat("one app process", [stack.env.APP_URL!]);

  // The same storm on two app processes of the same build, as compose.yaml runs two replicas: a
  // Node.js server renders on one thread, so one process uses one core however many the machine has.
  // Each install's pages go to both, so the one-refresh-per-install rule is held across processes.
  const second = await startSecondApp();
  try {
    await repeat("two app processes (one per core), each install's pages split between them", [stack.env.APP_URL!, second.url]);
  } finally {
    await second.stop();
  }
  await closeSql();
}
