// What the bench's sections share (scripts/bench.ts runs them, scripts/bench/sections.ts lists them):
// the context each section is given, the operators each one installs, the budget window, and the
// helpers that print figures. A helper only one section uses lives in that section's file.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startProcess, stopProcess, waitForHttp } from "../lib/processes";
import type { Stack } from "../lib/stack";
import { resultOf, runAppWorker } from "../../tests/helpers/app-process";
import { LARGE_OPERATOR_ID, installViaPortal } from "../../tests/helpers/stack";

/** The refresh storm: installs whose access tokens expire together (operators 1004 on). */
export const STORM_INSTALLS = 50;
/**
 * The rate budget section's window (BENCH_BUDGET_WINDOW_SECONDS, default 10): the limit is the
 * contract's default rate (1,000 per 60 s) over this window, so the ratio is the same as per 60 s
 * while a run takes a minute, not six. Set 60 to measure the contract's own window.
 */
export const BUDGET_WINDOW_SECONDS = Number(process.env.BENCH_BUDGET_WINDOW_SECONDS ?? 10);
if (!Number.isInteger(BUDGET_WINDOW_SECONDS) || BUDGET_WINDOW_SECONDS < 2 || BUDGET_WINDOW_SECONDS > 600) {
  console.error("bench: BENCH_BUDGET_WINDOW_SECONDS must be a whole number of seconds from 2 to 600");
  process.exit(2);
}
export const BUDGET_LIMIT = Math.round((1000 * BUDGET_WINDOW_SECONDS) / 60);
/** Operators for the budget section, after the storm's (sandbox/README.md decision 34). */
export const BUDGET_FIRST_OPERATOR = 1004 + STORM_INSTALLS;
export const BUDGET_INSTALLS = 10;
/** Operators for the sync section, after the budget's: one alone, then ten at once. */
export const SYNC_FIRST_OPERATOR = BUDGET_FIRST_OPERATOR + BUDGET_INSTALLS + 1;
export const SYNC_INSTALLS = 10;

export type Install = Awaited<ReturnType<typeof installViaPortal>>;

/** What scripts/bench.ts gives each section that runs against the stack. */
export type BenchContext = {
  /** The running stack; its env (APP_URL, DATABASE_URL, WEBHOOK_SECRET, ...) is also in process.env for the test helpers. */
  stack: Stack;
  /** BENCH_PORT_OFFSET: added to every port the bench opens. */
  offset: number;
  /** The bench's data folder (the database, logs). */
  dataDir: string;
  /** The session cookie of the install the always-timed redirect_uri made (operator 1001). */
  cookie: string;
  /** A second process of the app's production server (the storm). */
  startSecondApp: () => Promise<{ url: string; stop: () => Promise<void> }>;
  /** The large operator's install and one sync of it, made once for every section that reads its local copy. */
  syncedLargeOperator: () => Promise<{ install: Install; synced: { outcome: string } }>;
};

/**
 * A section: in process (before the stack starts), against the stack before any request reached the
 * app (`beforeTraffic`: what an idle server costs), or against the stack.
 */
export type Section =
  | { name: string; inProcess: true; run: () => void }
  | { name: string; inProcess?: false; beforeTraffic: true; run: (stack: Stack) => Promise<void> }
  | { name: string; inProcess?: false; beforeTraffic?: false; run: (context: BenchContext) => Promise<void> };

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function summary(name: string, samplesMs: number[]) {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const total = samplesMs.reduce((a, b) => a + b, 0);
  console.log(
    `${name.padEnd(44)} n=${String(samplesMs.length).padStart(5)}  p50=${percentile(sorted, 50).toFixed(2).padStart(8)} ms` +
      `  p99=${percentile(sorted, 99).toFixed(2).padStart(8)} ms  mean=${(total / samplesMs.length).toFixed(2).padStart(8)} ms`,
  );
}

// ----- figures a skeptic can weigh: a median with its range over repetitions, and the load beside it --
// A section that times something repeats it (at least 3 times), prints the median with its range
// (min-max), and the machine's 1-minute load average beside it (os.loadavg(): on a shared machine a
// figure measured under load says so). A ratio is taken within each repetition (its two sides measured
// one after the other), then the median of those ratios is printed: a load that comes and goes moves
// both sides of a ratio together, so a ratio travels between machines better than a time does.

/** Repetitions of a section's timed figures (BENCH_REPS, default 3, at least 3). */
export const REPS = Number(process.env.BENCH_REPS ?? 3);
if (!Number.isInteger(REPS) || REPS < 3 || REPS > 50) {
  console.error("bench: BENCH_REPS must be a whole number from 3 to 50");
  process.exit(2);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** "median (min-max)", each with `digits` decimals. */
export function spread(values: number[], digits = 0): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
  return `${f(median(values))} (${f(Math.min(...values))}-${f(Math.max(...values))})`;
}

/** The machine's 1-minute load average now, and its core count (a load above it means queuing). */
export const loadNow = () => os.loadavg()[0]!;
export const cores = os.availableParallelism();

/** One figure over the repetitions: its median (min-max) and the load averages they were measured at. */
export function printSpread(name: string, values: number[], unit: string, loads: number[], digits = 1, width = 52) {
  console.log(`${name.padEnd(width)} ${spread(values, digits).padStart(22)} ${unit.padEnd(3)}  load ${spread(loads, 2)} (${cores} cores)`);
}

/** A ratio per repetition against its target: the median decides, and how many repetitions met it is printed beside. */
export function printVerdict(name: string, values: number[], target: { max: number } | { min: number }, digits = 2, width = 52) {
  const meets = (value: number) => ("max" in target ? value <= target.max : value >= target.min);
  const bound = "max" in target ? `<= ${target.max}` : `>= ${target.min}`;
  const met = values.filter(meets).length;
  console.log(
    `${name.padEnd(width)} ${spread(values, digits).padStart(22)}      target ${bound}: ${meets(median(values)) ? "met" : "MISSED"} (median; met in ${met} of ${values.length} repetitions)`,
  );
}

export function opsPerSecond(name: string, iterations: number, fn: () => void) {
  for (let i = 0; i < Math.min(1000, iterations); i++) fn(); // warm up
  const started = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  const seconds = (performance.now() - started) / 1000;
  console.log(`${name.padEnd(44)} ${Math.round(iterations / seconds).toLocaleString("en-US").padStart(12)} ops/s`);
}

/** Process n (from 1) of the app's production server beside the stack's own: same build and configuration, its own port. */
export async function startAppReplica(stack: Stack, offset: number, n: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = 3400 + offset + n - 1;
  const serverJs = path.resolve(stack.env.NEXT_DIST_DIR || ".next", "standalone", "server.js");
  const managed = startProcess(`app-${n + 1}`, process.execPath, [serverJs], {
    env: { ...process.env, ...stack.env, NODE_ENV: "production", PORT: String(port), HOSTNAME: "localhost" },
    quiet: true,
  });
  const url = `http://localhost:${port}`;
  await waitForHttp(`${url}/`, 60_000, managed);
  return { url, stop: () => stopProcess(managed) };
}

/** A dashboard page that failed: not a 200, or one that shows a read failure (role="alert") instead of the charge points. */
export const dashboardPageFailed = (status: number, html: string) =>
  status !== 200 || html.includes('role="alert"') || !html.includes('data-testid="charge-point-count"');

/**
 * The sections that read the large operator's local copy (data-pages, overview) share one install
 * and one sync of it: installing the same operator again would only re-authorize the install.
 * The first call makes them; every later call gets the same.
 */
export function largeOperatorCopy(stack: Stack): BenchContext["syncedLargeOperator"] {
  let copy: ReturnType<BenchContext["syncedLargeOperator"]> | undefined;
  return () =>
    (copy ??= (async () => {
      const install = await installViaPortal(LARGE_OPERATOR_ID);
      const synced = resultOf<{ outcome: string }>(await runAppWorker(["sync", install.installRowId, "100"], { ...(stack.env as Record<string, string>), LOG_LEVEL: "warn" }));
      return { install, synced };
    })());
}

/** Clock ticks a second (`getconf CLK_TCK`; 100 on Linux almost everywhere). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * The app server's CPU time so far (user + system), in ms, from /proc/<pid>/stat (Linux only; NaN
 * elsewhere). The standalone server is one process, so its own counters are the app's whole CPU.
 * Read before and after N requests, the difference over N is the app's CPU per request: what a page
 * costs the server, whatever the bench's own process and the database spent meanwhile.
 */
export function appCpuMs(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis):
    // utime and stime are the 14th and 15th fields, in clock ticks.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(")").at(-1)!.trim().split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

/** The app server's resident memory (VmRSS, MiB) from /proc/<pid>/status; NaN off Linux. */
export function appRssMiB(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
    return Number(line?.split(/\s+/)[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** The load average over 1, 5 and 15 minutes, as a figure of how quiet the machine was. */
export function loadAverage(): string {
  return os.loadavg().map((n) => n.toFixed(2)).join(" ");
}

/**
 * App CPU per request over REPEATS blocks of `requestsPerBlock` requests (each block: `run` sends
 * them): the median and range of the blocks, and the load average at the end. `run` is awaited per
 * block; the blocks are the repetitions the figure's spread comes from.
 */
export async function appCpuPerRequest(
  name: string,
  pid: number | undefined,
  requestsPerBlock: number,
  run: () => Promise<void>,
  repeats = 3,
): Promise<number> {
  const perRequest: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const before = appCpuMs(pid);
    await run();
    perRequest.push((appCpuMs(pid) - before) / requestsPerBlock);
  }
  const sorted = [...perRequest].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(
    `${`app CPU: ${name}`.padEnd(44)} ${median.toFixed(2).padStart(8)} ms/request (median of ${repeats} x ${requestsPerBlock};` +
      ` range ${sorted[0]!.toFixed(2)}-${sorted.at(-1)!.toFixed(2)})  load ${loadAverage()}`,
  );
  return median;
}

/** Runs `count` calls of `one`, `concurrency` at a time. */
export async function concurrently(count: number, concurrency: number, one: (n: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await one(next++);
    }),
  );
}
