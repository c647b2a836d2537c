// Graceful shutdown, bounded: what the app and the worker do when the platform asks them to stop.
//
// A deploy, a scale-down or `docker compose stop` sends SIGTERM, waits a grace period, then sends
// SIGKILL. A process killed mid-work loses it, so on the first SIGTERM (or SIGINT) the process:
//
//   1. stops taking new work: the web server closes its listening socket (Next.js's own handler,
//      below), the worker takes no further job, and the jobs stop between installs (`signal`);
//   2. finishes what is in flight: requests already received (a webhook delivery is never retried
//      by the service, contract §6, so one that has arrived must be recorded), the refresh under way;
//   3. but only for SHUTDOWN_TIMEOUT_SECONDS: a request or job that hangs past that is given up,
//      with an error line saying so, rather than waiting for the platform's SIGKILL, which would end
//      the process without a word. Keep the platform's grace period longer (docs/deploying.md).
//
// In the app, Next.js's start-server already handles SIGTERM (it closes the HTTP server, waits for
// every open request, closes itself and exits with 143) but waits without limit. Its handler is kept,
// since it does the draining; this module adds the state (`isStopping`, `shutdownSignal`, read by
// /api/ready and the jobs) and the bound. The worker (scripts/worker.ts) drains itself.
//
// A token refresh is the one piece of work that must not die with the process: its answer is the only
// copy of the install's new refresh token (contract §3). A refresh can outlive what started it (a page
// whose browser went away, a job given up by its deadline), so Next.js's handler, which exits once the
// requests are answered, would cut it off. Every refresh holds the exit (`holdExitFor`) until it has
// committed its result: once stopping, `process.exit` waits for them, within the bound.
//
// What gives up at the bound cannot corrupt anything the next process relies on: a refresh is never
// interrupted by `signal` (the jobs look at it only between installs), and a refresh still running at
// the bound ends as a crash would, with its marker committed, which lib/oauth/refresh.ts settles later.
import "server-only";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";

type ShutdownState = {
  controller: AbortController;
  installed: boolean;
  /** Work the exit waits for (settled or not, never rejected). */
  held: Set<Promise<void>>;
};

// One state per process, kept on globalThis: Next.js bundles instrumentation.ts (which installs the
// handlers) and each route (which reads the state) separately, each with its own copy of this module.
const STATE_KEY = Symbol.for("partner-app.shutdown");
const globalWithState = globalThis as typeof globalThis & { [STATE_KEY]?: ShutdownState };

function state(): ShutdownState {
  globalWithState[STATE_KEY] ??= { controller: new AbortController(), installed: false, held: new Set() };
  return globalWithState[STATE_KEY];
}

/** True once the process was asked to stop: take no new work. */
export function isStopping(): boolean {
  return state().controller.signal.aborted;
}

/**
 * Aborts when the process is asked to stop. Long jobs check it between units of work (one install),
 * never inside one: a token refresh cut in half would leave its outcome unknown (lib/oauth/refresh.ts).
 */
export function shutdownSignal(): AbortSignal {
  return state().controller.signal;
}

/** The process does not exit before `work` settles (within SHUTDOWN_TIMEOUT_SECONDS): a token refresh under way. */
export function holdExitFor(work: Promise<unknown>): void {
  const held = state().held;
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  held.add(settled);
  void settled.finally(() => held.delete(settled));
}

async function heldWorkSettled(): Promise<void> {
  const held = state().held;
  while (held.size > 0) await Promise.all([...held]);
}

export type ShutdownOptions = {
  /** For the log lines: "app" or "worker". */
  processName: string;
  /** What is running, for the error line when the bound is hit (e.g. the worker's current job). */
  describeInFlight?: () => Record<string, unknown>;
};

/**
 * Installs the SIGTERM/SIGINT handlers, once per process. The bound is read now, so that a bad
 * SHUTDOWN_TIMEOUT_SECONDS stops the process at start-up, not at its first shutdown.
 */
export function installShutdownHandlers({ processName, describeInFlight }: ShutdownOptions): void {
  const current = state();
  if (current.installed) return; // `next dev` may register the instrumentation again
  current.installed = true;
  const timeoutSeconds = env().SHUTDOWN_TIMEOUT_SECONDS;

  const onSignal = (signal: NodeJS.Signals) => {
    // A second signal changes nothing: a shell's Ctrl-C reaches every process of the group, so
    // duplicates are normal (Next.js ignores them too). The bound already ends a hung shutdown.
    if (current.controller.signal.aborted) return;
    current.controller.abort(new Error(`${signal}: the process is stopping`));
    // Whoever exits now (Next.js's handler once its requests are answered, the worker once its jobs
    // end) waits for the held work first. Node offers no hook that delays an exit, hence the wrapper.
    const exit = process.exit.bind(process);
    process.exit = ((code?: number | string | null) => {
      const waiting = current.held.size;
      if (waiting > 0) logger.info({ process: processName, refreshes: waiting }, "waiting for the token refreshes under way before exiting");
      void heldWorkSettled().then(() => exit(code));
    }) as typeof process.exit;
    logger.info({ process: processName, signal, timeoutSeconds }, `stopping: no new work is taken; in-flight work has ${timeoutSeconds} s to finish`);

    // unref: the timer alone must not keep the process alive. When the work is done the process
    // ends (Next.js exits 143 after draining, the worker 0), and this never fires.
    setTimeout(() => {
      logger.error(
        { process: processName, signal, timeoutSeconds, ...describeInFlight?.() },
        `in-flight work did not finish within SHUTDOWN_TIMEOUT_SECONDS (${timeoutSeconds} s); exiting without it`,
      );
      exit(1);
    }, timeoutSeconds * 1000).unref();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
