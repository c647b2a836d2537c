// `npm test`'s two lanes: the whole suite split over two stacks that run side by side.
//
// The integration tests share a stack's database and sandbox (they empty them, move the sandbox's
// clock, arm its faults), so on one stack they can only run one file at a time, and most of their
// time is spent waiting (on a token endpoint's latency, a rate window, a process that must die).
// Two stacks (each its own PostgreSQL, sandbox and app process, one build shared) let two files
// wait at once. Each lane takes the next job from one queue, so the lanes stay balanced without
// anyone knowing the files' durations in advance.
//
// A test file whose first lines say `// npm test: alone` (with the reason) runs after both lanes
// are done, with nothing beside it: a burst of 2,000 deliveries measures the app's answer times
// against a deadline, and the other lane's load would make them the machine's.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { LaneMessage, LaneResult } from "./vitest-lane";
import { runCaptured } from "./processes";

export type Job = { kind: "vitest"; name: string; files: string[] } | { kind: "e2e"; name: string };
export type JobRecord = { job: string; lane: string; seconds: number } & LaneResult;

const ALONE_MARKER = /^\/\/ npm test: alone\b/m;

function testFiles(dir: string, where: (file: string) => boolean = () => true): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".test.ts") && where(file))
    .map((file) => path.join(dir, file))
    .sort();
}

/** The integration tests: tests/integration/, and each dashboard section's own (app/dashboard/<section>/_tests/). */
export function integrationTestFiles(): string[] {
  return [...testFiles("tests/integration"), ...testFiles("app", (file) => file.split(path.sep).includes("_tests"))];
}

/**
 * The queue: the end-to-end tests first (the longest job), then the unit, sandbox and conformance-check
 * tests (one job: they need no stack and run in parallel by themselves), then each integration file, largest first
 * (a rough guess at the longest first, so that the lanes end together). The files marked alone
 * come back separately.
 */
export function planJobs(): { queue: Job[]; alone: Job[] } {
  const integration = integrationTestFiles();
  const isAlone = (file: string) => ALONE_MARKER.test(readFileSync(file, "utf8").slice(0, 2_000));
  const bySizeDescending = (a: string, b: string) => statSync(b).size - statSync(a).size;
  const fileJob = (file: string): Job => ({ kind: "vitest", name: file, files: [file] });
  return {
    queue: [
      { kind: "e2e", name: "end-to-end (Playwright)" },
      {
        kind: "vitest",
        name: "unit, sandbox and conformance-check tests",
        files: [...testFiles("tests/unit"), ...testFiles("tests/sandbox"), ...testFiles("tests/conformance")],
      },
      ...integration.filter((file) => !isAlone(file)).sort(bySizeDescending).map(fileJob),
    ],
    alone: integration.filter(isAlone).map(fileJob),
  };
}

/** One lane: a stack's environment, a Vitest instance against it, and the jobs it has run. */
export class Lane {
  readonly records: JobRecord[] = [];
  private child: ChildProcess | undefined;
  private output = "";
  private pending: ((message: LaneMessage | undefined) => void) | undefined;

  constructor(
    readonly name: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly playwright: { bin: string; report: string },
  ) {}

  async start(): Promise<void> {
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/lib/vitest-lane.ts"], {
      env: this.env,
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    this.child = child;
    for (const stream of [child.stdout, child.stderr]) stream?.setEncoding("utf8").on("data", (chunk: string) => (this.output += chunk));
    child.on("message", (message: LaneMessage) => this.pending?.(message));
    child.on("exit", () => this.pending?.(undefined));
    const ready = await this.next();
    if (ready?.type !== "ready") throw new Error(`lane ${this.name}: Vitest did not start:\n${this.takeOutput()}`);
  }

  private next(): Promise<LaneMessage | undefined> {
    return new Promise((resolve) => {
      this.pending = (message) => {
        this.pending = undefined;
        resolve(message);
      };
    });
  }

  private takeOutput(): string {
    const output = this.output;
    this.output = "";
    return output;
  }

  /** Runs one job; prints a line when it passes, and everything it printed when it fails. */
  async run(job: Job): Promise<void> {
    const started = performance.now();
    let result: LaneResult;
    let output: string;
    if (job.kind === "e2e") {
      const run = await runCaptured(this.playwright.bin, ["test"], { ...this.env, PLAYWRIGHT_JSON_OUTPUT_NAME: this.playwright.report });
      const report = readJson(this.playwright.report) as { stats?: { expected?: number; unexpected?: number; flaky?: number; skipped?: number } } | undefined;
      result = {
        passed: (report?.stats?.expected ?? 0) + (report?.stats?.flaky ?? 0),
        failed: report?.stats?.unexpected ?? (run.code === 0 ? 0 : 1),
        skipped: report?.stats?.skipped ?? 0,
      };
      if (run.code !== 0 && result.failed === 0) result.failed = 1;
      output = run.output;
    } else {
      if (!this.child || this.child.exitCode !== null) throw new Error(`lane ${this.name} has stopped`);
      const reply = this.next();
      this.child.send({ type: "run", files: job.files });
      const message = await reply;
      result = message?.type === "result" ? message : { passed: 0, failed: 1, skipped: 0 };
      output = this.takeOutput();
    }
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    this.records.push({ job: job.name, lane: this.name, seconds, ...result });
    const counts = `${result.passed} passed${result.failed ? `, ${result.failed} failed` : ""}${result.skipped ? `, ${result.skipped} skipped` : ""}`;
    if (result.failed > 0 || job.kind === "e2e") console.log(`\n[lane ${this.name}] ${job.name}:\n${output.trimEnd()}`);
    console.log(`[lane ${this.name}] ${result.failed ? "✗" : "✓"} ${job.name}: ${counts} (${seconds} s)`);
  }

  /** Takes jobs from the shared queue until it is empty. */
  async drain(queue: Job[]): Promise<void> {
    for (let job = queue.shift(); job; job = queue.shift()) await this.run(job);
  }

  async stop(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child!.once("exit", () => resolve()));
    this.child.send({ type: "close" });
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    this.child.kill("SIGKILL");
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}
