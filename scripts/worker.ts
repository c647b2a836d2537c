// npm run worker: runs the scheduled jobs in a loop, for deployments without a platform scheduler
// (and for `npm run dev`, which starts it). With a scheduler, call /api/cron/* instead; both can
// run at once, since each job runs on one instance at a time (lib/jobs/exclusive.ts).
//
// It imports the app's lib/ directly, so it runs with the `react-server` condition (see package.json).
import { setTimeout as sleep } from "node:timers/promises";
import { runKeepAlive } from "../lib/jobs/keep-alive";
import { runReconcileSweep } from "../lib/jobs/reconcile-sweep";
import { logger } from "../lib/log";
import { assertValidEnvironment } from "../lib/env";

// The whole configuration first: a bad value stops here with one message, not in a loop of failures.
assertValidEnvironment("worker");

const intervalMs = Number(process.argv[2] ?? 15 * 60) * 1000;
let stopping = false;
process.on("SIGTERM", () => (stopping = true));
process.on("SIGINT", () => (stopping = true));

logger.info({ intervalSeconds: intervalMs / 1000 }, "worker started");
while (!stopping) {
  for (const [name, job] of [
    ["keep-alive", runKeepAlive],
    ["reconcile sweep", runReconcileSweep],
  ] as const) {
    try {
      await job();
    } catch (error) {
      logger.error({ err: error, job: name }, "job failed; trying again next round");
    }
  }
  for (let waited = 0; waited < intervalMs && !stopping; waited += 1000) await sleep(1000);
}
logger.info("worker stopped");
process.exit(0);
