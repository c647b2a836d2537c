// npm test: the whole suite, from a clean clone, with nothing to configure.
//
// Starts a fresh stack on its own ports (a new embedded PostgreSQL, a new sandbox state, a
// production build of the app), then runs Vitest (unit, sandbox conformance and integration
// tests) and Playwright (end-to-end, in Chromium), and prints one closing line with the totals.
//
// TEST_DATABASE_URL points the tests at your own PostgreSQL instead (its data is written to;
// never point it at a database you care about). DATABASE_URL is deliberately ignored here.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { findChromiumHere } from "./lib/browser";
import { generateLocalEnv } from "./lib/local-env";
import { runToCompletion, stopAll } from "./lib/processes";
import { startStack } from "./lib/stack";

// TEST_PORT_OFFSET runs a second suite beside a first one (other ports, another data folder).
const OFFSET = Number(process.env.TEST_PORT_OFFSET ?? 0);
const DATA_DIR = OFFSET ? `.data/test-${OFFSET}` : ".data/test";
const VITEST_REPORT = path.join(DATA_DIR, "vitest-report.json");
const PLAYWRIGHT_REPORT = path.join(DATA_DIR, "playwright-report.json");
const bin = (name: string) => path.resolve("node_modules/.bin", name);

// `npm test -- vitest [vitest args]` or `npm test -- e2e [playwright args]` runs one half.
const [only, ...passThrough] = process.argv.slice(2);
const started = performance.now();

// The browser first: a machine without one stops here with one message, before anything starts.
let chromiumPath: string | undefined;
if (!only || only === "e2e") {
  const browser = await findChromiumHere();
  if (!browser.ok) {
    console.error(`[test] ${browser.message}`);
    process.exit(1);
  }
  chromiumPath = browser.path;
  console.log(`[test] Chromium: ${browser.path} (${browser.source})`);
}

const env = {
  ...generateLocalEnv({ app: 3100 + OFFSET, sandbox: 4110 + OFFSET }),
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
  // widening can be walked end to end (tests/e2e/dashboard-teams-energy.spec.ts).
  DASHBOARD_MANAGE_TEAMS: "on",
  ...(OFFSET ? { NEXT_DIST_DIR: `.next-test-${OFFSET}` } : {}),
};
const stack = await startStack({
  env,
  databaseUrl: process.env.TEST_DATABASE_URL || undefined,
  dataDir: DATA_DIR,
  databasePort: 54330 + OFFSET,
  fresh: true,
  appMode: "start",
  quiet: true,
}).catch((error: unknown) => {
  console.error(`[test] could not start the stack: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`[test] process logs are in ${DATA_DIR}/logs/`);
  process.exit(1);
});
console.log(`[test] stack ready in ${Math.round((performance.now() - started) / 1000)} s (logs in ${DATA_DIR}/logs/)`);

const testEnv: NodeJS.ProcessEnv = { ...stack.env, TEST_DATA_DIR: DATA_DIR, TEST_LOG_DIR: path.join(DATA_DIR, "logs") };
let exitCode = 0;
const totals = { passed: 0, failed: 0, skipped: 0 };

function readJson(file: string): unknown {
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
}

try {
  if (!only || only === "vitest") {
    rmSync(VITEST_REPORT, { force: true });
    const code = await runToCompletion(bin("vitest"), ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${VITEST_REPORT}`, ...(only ? passThrough : [])], testEnv);
    const report = readJson(VITEST_REPORT) as { numPassedTests?: number; numFailedTests?: number; numPendingTests?: number; numTodoTests?: number } | undefined;
    totals.passed += report?.numPassedTests ?? 0;
    totals.failed += report?.numFailedTests ?? (code === 0 ? 0 : 1);
    totals.skipped += (report?.numPendingTests ?? 0) + (report?.numTodoTests ?? 0);
    if (code !== 0) exitCode = code;
  }
  if (!only || only === "e2e") {
    rmSync(PLAYWRIGHT_REPORT, { force: true });
    const code = await runToCompletion(bin("playwright"), ["test", ...(only ? passThrough : [])], {
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
  await stack.stop();
}

console.log(`\n[test] finished in ${Math.round((performance.now() - started) / 1000)} s`);
console.log(`tests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}`);
process.exit(exitCode || (totals.failed > 0 ? 1 : 0));
