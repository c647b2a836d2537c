// npm test: the whole suite, from a clean clone, with nothing to configure.
//
// Starts two fresh stacks on their own ports (each a new embedded PostgreSQL, a new sandbox state
// and the app's production server; one build serves both), then runs Vitest (unit, sandbox
// conformance and integration tests) and Playwright (end-to-end, in Chromium) on them side by side
// (scripts/lib/test-lanes.ts), and prints one closing line with the totals.
//
// `npm test -- vitest [vitest args]` or `npm test -- e2e [playwright args]` runs one half, on one stack.
// `npm test -- files <file>...` runs the given test files of both kinds (*.test.ts with Vitest,
// *.spec.ts with Playwright) on one stack and one build: a new feature's tests, for example.
//
// TEST_DATABASE_URL points the tests at your own PostgreSQL instead (its data is written to;
// never point it at a database you care about). DATABASE_URL is deliberately ignored here.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { findChromiumHere } from "./lib/browser";
import { generateLocalEnv } from "./lib/local-env";
import { isPortTaken } from "./lib/ports";
import { runToCompletion, stopAll } from "./lib/processes";
import { startStack, type Stack } from "./lib/stack";
import { Lane, planJobs, type JobRecord } from "./lib/test-lanes";
import { measureTimeScale } from "../tests/helpers/time-scale";

// How busy the machine is, measured once before anything starts: every test timeout is scaled by it
// (tests/helpers/time-scale.ts). TEST_TIME_SCALE given in the shell is kept.
process.env.TEST_TIME_SCALE ??= String(measureTimeScale());
console.log(`[test] time scale ${process.env.TEST_TIME_SCALE} (test timeouts × that; 1 = an idle machine)`);

// TEST_PORT_OFFSET runs a second suite beside a first one (other ports, another data folder).
const OFFSET = Number(process.env.TEST_PORT_OFFSET ?? 0);
const DATA_DIR = OFFSET ? `.data/test-${OFFSET}` : ".data/test";
const VITEST_REPORT = path.join(DATA_DIR, "vitest-report.json");
const PLAYWRIGHT_REPORT = path.join(DATA_DIR, "playwright-report.json");
// The second stack of a whole run (scripts/lib/test-lanes.ts): its own ports and data folder.
const LANE_B_DIR = path.join(DATA_DIR, "lane-b");
const bin = (name: string) => path.resolve("node_modules/.bin", name);

const [only, ...passThrough] = process.argv.slice(2);
if (only !== undefined && !["vitest", "e2e", "files"].includes(only)) {
  console.error(`[test] unknown mode "${only}": use npm test, npm test -- vitest|e2e [args], or npm test -- files <file>...`);
  process.exit(2);
}
// `files`: which half runs which of them.
const vitestFiles = only === "files" ? passThrough.filter((file) => file.endsWith(".test.ts")) : [];
const playwrightFiles = only === "files" ? passThrough.filter((file) => file.endsWith(".spec.ts")) : [];
if (only === "files" && vitestFiles.length + playwrightFiles.length !== passThrough.length) {
  console.error("[test] npm test -- files takes test files only: *.test.ts (Vitest) and *.spec.ts (Playwright)");
  process.exit(2);
}
const runsVitest = only === "vitest" || vitestFiles.length > 0;
const runsPlaywright = only === "e2e" || playwrightFiles.length > 0;
const started = performance.now();

// The browser first: a machine without one stops here with one message, before anything starts.
let chromiumPath: string | undefined;
if (!only || runsPlaywright) {
  const browser = await findChromiumHere();
  if (!browser.ok) {
    console.error(`[test] ${browser.message}`);
    process.exit(1);
  }
  chromiumPath = browser.path;
  console.log(`[test] Chromium: ${browser.path} (${browser.source})`);
}

/** The requested scopes and the app's name the suite assumes (see stackEnv). */
const TEST_REGISTRATION = {
  APP_REQUESTED_SCOPES: "charge-points:read charge-transactions:read",
  APP_NAME: "Partner App",
} as const;

// The staff hashes' scrypt cost in the test stacks: the lowest lib/config/password-hash.ts accepts
// (16 MiB, a sixth of the default's work). The sign-in tests count attempts and lock-outs, dozens in
// a row; at the default cost a busy runner spent their 30 s on hashing alone. An unknown email is
// verified at the account's cost (unmatchableHashLike), so the timing they check still holds, and the
// default's own cost is the bench's and tests/unit/password.test.ts's business.
const TEST_PASSWORD_HASH = { N: 2 ** 14, r: 8, p: 1 };

// The configuration of a stack on the given ports (new random secrets each time).
const stackEnv = (ports: { app: number; sandbox: number }) => ({
  ...generateLocalEnv(ports, { passwordHash: TEST_PASSWORD_HASH }),
  // The app's registration at the sandbox that the tests are written against, pinned here rather
  // than taken from the one the template ships (scripts/lib/local-env.ts, .env.example): a fork that
  // requests other scopes or renames its app changes those, and no test may break because of it.
  // A test that needs another registration sets it through the sandbox (POST /_sandbox/app/scopes,
  // docs/testing.md), as the re-authorization tests do.
  ...TEST_REGISTRATION,
  // The app under test is mid-way through a webhook secret rotation, so both secrets are exercised.
  WEBHOOK_PREVIOUS_SECRET: randomBytes(32).toString("base64url"),
  // Operators beyond the three described ones, for tests that need many installs at once (a
  // refresh storm: tests/integration/refresh-storm.test.ts; sandbox/README.md decision 34).
  SANDBOX_OPERATORS: "30",
  // The service grants each install 100,000 requests a minute here (contract §8's default is 1,000),
  // so tests about other things (200 calls at once for the refresh single-flight) do not wait on
  // the app's rate budget. The budget's own tests set each install's limit at the sandbox
  // (tests/integration/rate-budget.test.ts).
  SANDBOX_RATE_LIMIT: "100000",
  // The sandbox's data stays as seeded when tests move its clock (it moves with the clock by default:
  // sandbox/README.md decision 43); a test that wants new charges switches it on (POST /_sandbox/live-data).
  SANDBOX_LIVE_DATA: "off",
  // The app under test offers "manage teams" (off as shipped), so the teams write and its scope
  // widening can be walked end to end (the Teams section's own end-to-end test).
  DASHBOARD_MANAGE_TEAMS: "on",
  ...(OFFSET ? { NEXT_DIST_DIR: `.next-test-${OFFSET}` } : {}),
});

function startFailed(error: unknown): never {
  console.error(`[test] could not start the stack: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`[test] process logs are in ${DATA_DIR}/logs/ (and ${LANE_B_DIR}/logs/)`);
  process.exit(1);
}

// The embedded databases' ports: below Linux's ephemeral range (32768-60999 by default), where the
// source port of an outgoing connection (the suite makes thousands) can sit in TIME-WAIT on exactly
// the port a new run wants, and the port check below would refuse a free machine.
const TEST_DATABASE_PORT = 25430;

// A server left over from an interrupted run would answer in place of the new one, with another
// database and other secrets: stop before starting anything.
// A whole run uses two stacks; one half (or TEST_DATABASE_URL: one database) runs on stack A alone.
const twoStacks = !only && !process.env.TEST_DATABASE_URL;
const ports = [3100, 4110, TEST_DATABASE_PORT, ...(twoStacks ? [3600, 4610, TEST_DATABASE_PORT + 1000] : [])].map((base) => base + OFFSET);
const taken = (await Promise.all(ports.map(async (port) => ((await isPortTaken(port)) ? port : undefined)))).filter((port) => port !== undefined);
if (taken.length) {
  console.error(`[test] port${taken.length > 1 ? "s" : ""} ${taken.join(", ")} already in use (a run that was interrupted?): stop what listens there, or run with another TEST_PORT_OFFSET`);
  process.exit(1);
}

// Stack A builds the app; stack B starts its database and sandbox meanwhile, then serves the same build.
let built!: () => void;
let buildFailed!: (error: unknown) => void;
const sharedBuild = new Promise<void>((resolve, reject) => ((built = resolve), (buildFailed = reject)));
sharedBuild.catch(() => undefined);
const stackA = startStack({
  env: stackEnv({ app: 3100 + OFFSET, sandbox: 4110 + OFFSET }),
  databaseUrl: process.env.TEST_DATABASE_URL || undefined,
  dataDir: DATA_DIR,
  databasePort: TEST_DATABASE_PORT + OFFSET,
  fresh: true,
  appMode: "start",
  quiet: true,
  onBuilt: () => built(),
});
stackA.catch(buildFailed);
const stackB: Promise<Stack | undefined> = twoStacks
  ? startStack({
      env: stackEnv({ app: 3600 + OFFSET, sandbox: 4610 + OFFSET }),
      dataDir: LANE_B_DIR,
      databasePort: TEST_DATABASE_PORT + 1000 + OFFSET,
      fresh: true,
      appMode: "start",
      quiet: true,
      sharedBuild,
    })
  : Promise.resolve(undefined);
const stacks = await Promise.all([stackA, stackB]).catch(async (error: unknown) => {
  await Promise.allSettled([stackA.then((s) => s.stop()), stackB.then((s) => s?.stop())]);
  startFailed(error);
});
const [stack, secondStack] = stacks;
console.log(`[test] ${secondStack ? "two stacks" : "stack"} ready in ${Math.round((performance.now() - started) / 1000)} s (logs in ${DATA_DIR}/logs/)`);

// Ctrl-C (or a CI timeout) stops the servers too: they run in process groups of their own, and one
// left behind would be found by the port check of the next run.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void Promise.allSettled([stopAll(), stack.stop(), secondStack?.stop()]).then(() => process.exit(130)));
}

const testEnv: NodeJS.ProcessEnv = { ...stack.env, TEST_DATA_DIR: DATA_DIR, TEST_LOG_DIR: path.join(DATA_DIR, "logs") };
let exitCode = 0;
const totals = { passed: 0, failed: 0, skipped: 0 };

function readJson(file: string): unknown {
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
}

/** The whole suite on two lanes (scripts/lib/test-lanes.ts); returns what each job did. */
async function runLanes(second: Stack): Promise<JobRecord[]> {
  const playwright = (dir: string) => ({ bin: bin("playwright"), report: path.join(dir, "playwright-report.json") });
  const browser = chromiumPath ? { CHROMIUM_PATH: chromiumPath } : {};
  const a = new Lane("a", { ...testEnv, ...browser }, playwright(DATA_DIR));
  const b = new Lane("b", { ...second.env, ...browser, TEST_DATA_DIR: LANE_B_DIR, TEST_LOG_DIR: path.join(LANE_B_DIR, "logs") }, playwright(LANE_B_DIR));
  try {
    await Promise.all([a.start(), b.start()]);
    const { queue, alone } = planJobs();
    await Promise.all([a.drain(queue), b.drain(queue)]);
    if (alone.length) console.log(`[test] now the files that run alone: ${alone.map((job) => job.name).join(", ")}`);
    await a.drain(alone);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  return [...a.records, ...b.records];
}

try {
  if (secondStack) {
    const records = await runLanes(secondStack);
    for (const record of records) {
      totals.passed += record.passed;
      totals.failed += record.failed;
      totals.skipped += record.skipped;
    }
    writeFileSync(path.join(DATA_DIR, "test-jobs.json"), JSON.stringify(records, null, 2));
    const slowest = [...records].sort((x, y) => y.seconds - x.seconds).slice(0, 6);
    console.log(`\n[test] the longest jobs: ${slowest.map((r) => `${r.job} ${r.seconds} s (lane ${r.lane})`).join("; ")}`);
    const laneSeconds = (lane: string) => Math.round(records.filter((r) => r.lane === lane).reduce((sum, r) => sum + r.seconds, 0));
    console.log(`[test] busy time: lane a ${laneSeconds("a")} s, lane b ${laneSeconds("b")} s (every job's time is in ${DATA_DIR}/test-jobs.json)`);
    if (totals.failed > 0) exitCode = 1;
  }
  if (runsVitest || (!only && !secondStack)) {
    rmSync(VITEST_REPORT, { force: true });
    const code = await runToCompletion(bin("vitest"), ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${VITEST_REPORT}`, ...(only === "files" ? vitestFiles : only ? passThrough : [])], testEnv);
    const report = readJson(VITEST_REPORT) as { numPassedTests?: number; numFailedTests?: number; numPendingTests?: number; numTodoTests?: number } | undefined;
    totals.passed += report?.numPassedTests ?? 0;
    totals.failed += report?.numFailedTests ?? (code === 0 ? 0 : 1);
    totals.skipped += (report?.numPendingTests ?? 0) + (report?.numTodoTests ?? 0);
    if (code !== 0) exitCode = code;
  }
  if (runsPlaywright || (!only && !secondStack)) {
    rmSync(PLAYWRIGHT_REPORT, { force: true });
    const code = await runToCompletion(bin("playwright"), ["test", ...(only === "files" ? playwrightFiles : only ? passThrough : [])], {
      ...testEnv,
      PLAYWRIGHT_JSON_OUTPUT_NAME: PLAYWRIGHT_REPORT,
      ...(chromiumPath ? { CHROMIUM_PATH: chromiumPath } : {}),
    });
    const report = readJson(PLAYWRIGHT_REPORT) as { stats?: { expected?: number; unexpected?: number; flaky?: number; skipped?: number } } | undefined;
    totals.passed += (report?.stats?.expected ?? 0) + (report?.stats?.flaky ?? 0);
    totals.failed += report?.stats?.unexpected ?? (code === 0 ? 0 : 1);
    totals.skipped += report?.stats?.skipped ?? 0;
    if (code !== 0) exitCode = code;
  }
} finally {
  await stopAll();
  await Promise.all([stack.stop(), secondStack?.stop()]);
}

console.log(`\n[test] finished in ${Math.round((performance.now() - started) / 1000)} s`);
console.log(`tests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}`);
process.exit(exitCode || (totals.failed > 0 ? 1 : 0));
