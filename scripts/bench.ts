// npm run bench: performance figures, printed (never asserted: tests assert behaviour, this measures).
//
// Starts the same fresh stack as `npm test` (embedded PostgreSQL, the sandbox, a production build
// of the app) on its own ports, then runs each benchmark and prints a table per benchmark. Every
// load is bounded in count and sent to loopback only.
// It runs with the `react-server` condition so it can import server-only modules from lib/.
// Each section is a file of its own in scripts/bench/, listed in order in scripts/bench/sections.ts;
// what they share (the context they are given, the operators each installs, the printing) is in
// scripts/bench/lib.ts.
import { performance } from "node:perf_hooks";
import { type BenchContext, BUDGET_INSTALLS, STORM_INSTALLS, SYNC_INSTALLS, largeOperatorCopy, startAppReplica, summary } from "./bench/lib";
import { SECTIONS } from "./bench/sections";
import { generateLocalEnv } from "./lib/local-env";
import { stopAll } from "./lib/processes";
import { startStack } from "./lib/stack";
import { approveInPortal, closeSql } from "../tests/helpers/stack";

// `npm run bench -- stampede ingest` runs only the sections named (see scripts/bench/sections.ts); the
// portal walk, the redirect_uri and the dashboard always run, since the others use the install they
// make. BENCH_PORT_OFFSET runs a second bench beside a first one (other ports and folders).
const chosen = process.argv.slice(2);
const names = SECTIONS.map((section) => section.name);
const unknown = chosen.filter((name) => !names.includes(name));
if (unknown.length > 0) {
  console.error(`bench: unknown section(s) ${unknown.join(", ")}; choose from ${names.join(", ")}`);
  process.exit(2);
}
const runs = SECTIONS.filter((section) => chosen.length === 0 || chosen.includes(section.name));
const OFFSET = Number(process.env.BENCH_PORT_OFFSET ?? 0);
const dataDir = OFFSET ? `.data/bench-${OFFSET}` : ".data/bench";

// --- In process, before the stack: the cost of the security primitives on the hot paths ----------
for (const section of runs) if (section.inProcess) section.run();

// --- Against the running stack ---------------------------------------------------------------
console.log("\n== against the stack (the standalone server + sandbox + PostgreSQL) ==");
const stack = await startStack({
  // The redirect_uri is limited per client address (lib/installs/callback-limit.ts); the bench's
  // many callbacks from one address measure its cost, not the limit, which is still consulted.
  env: {
    ...generateLocalEnv({ app: 3200 + OFFSET, sandbox: 4210 + OFFSET }),
    CALLBACK_REQUESTS_PER_MINUTE: "10000",
    // The ingest section's baseline (b): an empty route handler in the same build (404 unless on).
    BENCH_EMPTY_ROUTE: "on",
    // The refresh storm needs 50 installs at once, and the service allows one live install per
    // operator: the sandbox seeds extra operators (sandbox/README.md decision 34).
    // The rate budget section installs 1 + 10 more.
    // The sync section installs 1 + 10 more; the keep-alive section makes its own (bulk installs).
    SANDBOX_OPERATORS: String(3 + STORM_INSTALLS + 1 + BUDGET_INSTALLS + 1 + SYNC_INSTALLS),
    // Sections other than the budget's are not about the rate limit: the service grants a lot.
    SANDBOX_RATE_LIMIT: "100000",
    // A long charge list to walk (the budget section) and to sync (the sync section).
    SANDBOX_CHARGES_PER_OPERATOR: process.env.BENCH_CHARGES_PER_OPERATOR ?? "2000",
    // Lists stay as seeded however the clock moves (sandbox/README.md decision 43), so runs compare.
    SANDBOX_LIVE_DATA: "off",
    ...(OFFSET ? { NEXT_DIST_DIR: `.next-bench-${OFFSET}` } : {}),
  },
  dataDir,
  // Away from the test suites' ports (25430 + TEST_PORT_OFFSET, scripts/test.ts), so a bench can run
  // beside them, and below the ephemeral port range for the same reason as theirs.
  databasePort: 27500 + OFFSET,
  fresh: true,
  appMode: "start",
  // BENCH_APP_NODE_OPTIONS: Node options for the app's server alone, e.g. a CPU profile of the
  // sections run (`--cpu-prof --cpu-prof-dir=.data/profiles`, written when the server stops).
  appNodeOptions: process.env.BENCH_APP_NODE_OPTIONS,
  quiet: true,
});
// The test helpers (portal walk, SQL, sandbox control) read the stack's addresses from the environment.
Object.assign(process.env, stack.env);

try {
  for (const section of runs) if (!section.inProcess && section.beforeTraffic) await section.run(stack);
  // The redirect_uri: redeem the code, ask /consumers/me, store the install and its tokens.
  const callbackMs: number[] = [];
  let cookie = "";
  for (let i = 0; i < 30; i++) {
    const callback = await approveInPortal(1001);
    const started = performance.now();
    const response = await fetch(callback, { redirect: "manual" });
    callbackMs.push(performance.now() - started);
    if (response.status !== 303 || !response.headers.get("location")?.endsWith("/dashboard")) throw new Error(`callback failed: ${response.status}`);
    cookie = response.headers.get("set-cookie")!.split(";")[0]!;
  }
  summary("GET /oauth/callback (code → tokens → stored)", callbackMs.slice(3)); // first runs warm the server

  // The charge points page before any sync (live): session → install → token → GET /charge-points → render.
  const dashboardMs: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    const response = await fetch(`${stack.env.APP_URL}/dashboard/charge-points?perPage=25`, { headers: { cookie } });
    await response.text();
    dashboardMs.push(performance.now() - started);
  }
  summary("GET /dashboard/charge-points (live API read, 25 rows)", dashboardMs.slice(5));

  const context: BenchContext = {
    stack,
    offset: OFFSET,
    dataDir,
    cookie,
    startSecondApp: () => startAppReplica(stack, OFFSET, 1),
    syncedLargeOperator: largeOperatorCopy(stack),
  };
  for (const section of runs) if (!section.inProcess && !section.beforeTraffic) await section.run(context);
} finally {
  // A section that used SQL and did not close its pool would see its idle connections killed below.
  await closeSql();
  await stopAll();
  await stack.stop();
}
