// Runs tests/helpers/app-worker.ts (or a section's own worker script) as a separate OS process: a
// second app instance, or one with other variables.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

export type WorkerRun = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

// `node --import tsx` keeps it one OS process (the tsx CLI would run the script in a child), so a
// test that kills it, or that it kills itself, sees the signal.
const TSX_LOADER = path.resolve("node_modules/tsx/dist/esm/index.mjs");

/**
 * `envOverrides`: variables to set; one given as undefined is left out of the process's environment.
 * `script`: the worker to run, from the repository's root; a section's tests pass their own, so that
 * the shared worker imports nothing of an optional section.
 */
export function startAppWorker(
  args: string[],
  envOverrides: Record<string, string | undefined> = {},
  script = "tests/helpers/app-worker.ts",
): { child: ChildProcess; done: Promise<WorkerRun> } {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", TSX_LOADER, script, ...args], {
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "info", ...envOverrides },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<WorkerRun>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export async function runAppWorker(args: string[], envOverrides: Record<string, string | undefined> = {}, script?: string): Promise<WorkerRun> {
  return startAppWorker(args, envOverrides, script).done;
}

/** The worker's result line: the last JSON line that is not a pino log line (those have a `level`). */
export function resultOf<T>(run: WorkerRun): T {
  const results = run.stdout
    .trim()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((value) => !("level" in value));
  const last = results.at(-1);
  if (!last) throw new Error(`the worker printed no result (exit ${run.code ?? run.signal}): ${run.stderr.slice(-2000)}`);
  return last as T;
}
