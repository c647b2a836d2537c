// npm run worker: the job engine's worker (lib/jobs/engine.ts). It runs the schedules (pg-boss
// cron: keep-alive hourly, the reconcile sweep every 5 minutes; lib/jobs/kinds.ts), their fan-outs,
// and the per-install jobs they enqueue, JOB_CONCURRENCY at a time per queue (keep-alive's
// KEEP_ALIVE_CONCURRENCY). Run as many as you
// like, on as many machines: pg-boss hands each job to one worker, one schedule run is sent however
// many run, and one install is never worked on twice at once. `npm run dev` starts one. On a
// serverless host, call /api/cron/* instead; both can run at once.
//
// On SIGTERM (a deploy, `docker compose stop`) it takes no further job, lets the jobs in hand finish
// (a token refresh is never cut in half), and exits 0; if that takes longer than
// SHUTDOWN_TIMEOUT_SECONDS, lib/shutdown.ts logs what was running and exits 1. A job a killed worker
// had in hand is retried once it expires (lib/jobs/kinds.ts, expireInSeconds).
//
// It imports the app's lib/ directly, so it runs with the `react-server` condition (see package.json).
import { once } from "node:events";
import { env, assertValidEnvironment } from "../lib/env";
import { requestScheduledRuns, startWorkers } from "../lib/jobs/engine";
import { stopJobEngine } from "../lib/jobs/enqueue";
import { logger } from "../lib/log";
import { installShutdownHandlers, shutdownSignal } from "../lib/shutdown";
import { startTelemetry } from "../lib/telemetry/setup";

// The whole configuration first: a bad value stops here with one message, not in a loop of failures.
assertValidEnvironment("worker");
// Then OpenTelemetry, before any work, when an OTLP endpoint is configured (lib/telemetry/setup.ts).
const telemetry = await startTelemetry("worker");

// The jobs in hand (kind and install; one of each at most), for the error line if stopping takes longer than the bound.
const inFlight = new Set<string>();
installShutdownHandlers({
  processName: "worker",
  describeInFlight: () => {
    const jobs = [...inFlight].map((entry) => entry.split(" "));
    return { job: [...new Set(jobs.map(([kind]) => kind))].join(",") || null, installs: jobs.map(([, install]) => install) };
  },
});
const stop = shutdownSignal();

const { JOB_CONCURRENCY, KEEP_ALIVE_CONCURRENCY, SHUTDOWN_TIMEOUT_SECONDS, WORKER_JOBS } = env();
try {
  await startWorkers({
    kinds: WORKER_JOBS,
    concurrency: JOB_CONCURRENCY,
    concurrencyOf: { "keep-alive": KEEP_ALIVE_CONCURRENCY },
    onJobStart: (kind, installRowId) => inFlight.add(`${kind} ${installRowId}`),
    onJobEnd: (kind, installRowId) => inFlight.delete(`${kind} ${installRowId}`),
  });
  await requestScheduledRuns(WORKER_JOBS);
} catch (error) {
  logger.error({ err: error }, "the worker could not start");
  process.exit(1);
}
logger.info({ concurrency: JOB_CONCURRENCY, keepAliveConcurrency: KEEP_ALIVE_CONCURRENCY, jobs: WORKER_JOBS ?? "all" }, "worker started");

if (!stop.aborted) await once(stop, "abort");
// No new job from here; the jobs in hand finish. pg-boss is given longer than the bound, so that the
// bound in lib/shutdown.ts, with its error line naming the jobs, is what ends a hung one.
await stopJobEngine(SHUTDOWN_TIMEOUT_SECONDS * 1000 + 5_000);
logger.info("worker stopped");
await telemetry.shutdown(); // the last spans and metrics, before the exit cuts them off
process.exit(0);
