// npm run worker: runs the scheduled jobs in a loop, for deployments without a platform scheduler
// (and for `npm run dev`, which starts it). With a scheduler, call /api/cron/* instead; both can
// run at once, since each job runs on one instance at a time (lib/jobs/exclusive.ts).
//
// On SIGTERM (a deploy, `docker compose stop`) it takes no further job, lets the job under way stop
// between two installs (never inside a token refresh), and exits 0; if that takes longer than
// SHUTDOWN_TIMEOUT_SECONDS, lib/shutdown.ts logs what was running and exits 1.
//
// It imports the app's lib/ directly, so it runs with the `react-server` condition (see package.json).
import { setTimeout as sleep } from "node:timers/promises";
import { runKeepAlive } from "../lib/jobs/keep-alive";
import { runReconcileSweep } from "../lib/jobs/reconcile-sweep";
import { logger } from "../lib/log";
import { assertValidEnvironment } from "../lib/env";
import { installShutdownHandlers, shutdownSignal } from "../lib/shutdown";

// The whole configuration first: a bad value stops here with one message, not in a loop of failures.
assertValidEnvironment("worker");

const intervalMs = Number(process.argv[2] ?? 15 * 60) * 1000;
let running: string | null = null;
installShutdownHandlers({ processName: "worker", describeInFlight: () => ({ job: running }) });
const stop = shutdownSignal();

const jobs = [
  ["keep-alive", runKeepAlive],
  ["reconcile sweep", runReconcileSweep],
] as const;

logger.info({ intervalSeconds: intervalMs / 1000 }, "worker started");
while (!stop.aborted) {
  for (const [name, job] of jobs) {
    if (stop.aborted) break; // no new job once stopping
    running = name;
    try {
      await job({ signal: stop });
    } catch (error) {
      logger.error({ err: error, job: name }, "job failed; trying again next round");
    }
    running = null;
  }
  // Waits for the next round, or until SIGTERM, whichever comes first.
  await sleep(intervalMs, undefined, { signal: stop }).catch(() => undefined);
}
logger.info("worker stopped");
process.exit(0);
