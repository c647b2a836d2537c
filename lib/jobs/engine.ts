// The job engine's high half: the work of each job kind, and what runs it. A kind's queues, schedule
// and policy are declared in lib/jobs/kinds.ts; its work, the due query and the per-install function
// (plain functions in this folder), is registered here, in JOB_WORK.
//
//   - the worker (scripts/worker.ts) runs the schedules (pg-boss cron, one sender however many
//     workers run), the fan-outs, the per-install jobs and the alert deliveries (startWorkers);
//   - a cron route on a serverless host (lib/jobs/cron-route.ts, app/api/cron/[job]) does one run by
//     hand (runJobNow): the fan-out, then a bounded batch of the queued per-install jobs within a time limit.
//
// Only those two import this file. Everything else that needs a job only sends one, through
// lib/jobs/enqueue.ts (the process's pg-boss, started as "app" or "worker"): the jobs registered
// here import the install state machine, which raises alerts, which enqueue; a sender importing this
// file would close that circle. `npm run lint` checks it (.dependency-cruiser.mjs).
import "server-only";
import { hostname } from "node:os";
import type { Job, JobResult } from "pg-boss";
import { logger } from "@/lib/log";
import { deliverAlert } from "@/lib/alerts/deliver";
import { withRunDeadline } from "@/lib/partner-api/client";
import { traceJob } from "@/lib/telemetry";
import { expiryOf, jobEngine, type InstallJobData } from "./enqueue";
import { checkInstall, findInstallsDueForCheck } from "./install-check";
import { findGrantsDueForKeepAlive, keepInstallAlive } from "./keep-alive";
import { JOB_KIND_NAMES, JOB_KINDS, type JobKind } from "./kinds";
import { ALERT_QUEUES } from "./queues";
import { findRetentionDue, retentionJob } from "./retention-jobs";
import { findInstallsDueForSync, syncInstallJob } from "./sync-jobs";

/** What a job kind does: the other half of its declaration in lib/jobs/kinds.ts. */
export type JobWork = {
  /**
   * The installs due now (row ids): one indexed query, run by the fan-out. Each is a job's key (its
   * singleton key and `installRowId`); the retention kind also keys a job per table (./retention-jobs.ts).
   */
  findDue: (now: Date) => Promise<string[]>;
  /** One key's work: returns its outcome, or throws to have the job retried. */
  work: (installRowId: string) => Promise<string>;
};

/**
 * Each kind's work, keyed by the kinds of lib/jobs/kinds.ts: a kind declared there and missing here,
 * or one here that is not declared there, fails `npm run typecheck`.
 */
export const JOB_WORK = {
  "keep-alive": { findDue: findGrantsDueForKeepAlive, work: (installRowId) => keepInstallAlive(installRowId) },
  reconcile: { findDue: findInstallsDueForCheck, work: checkInstall },
  sync: { findDue: findInstallsDueForSync, work: syncInstallJob },
  // Keys are install row ids and `table:<name>` (./retention-jobs.ts says why one kind serves both).
  retention: { findDue: findRetentionDue, work: retentionJob },
} satisfies Record<JobKind, JobWork>;

/** Per-install jobs inserted per statement by a fan-out: 10,000 installs take ten statements. */
const FAN_OUT_CHUNK = 1_000;

/**
 * The fan-out: the installs due now, one per-install job each. An install that already has a job
 * waiting gets no second one (the queue is stately, keyed by install), so running it twice, or on
 * two workers, enqueues each install once.
 */
export async function fanOut(kind: JobKind, now = new Date()): Promise<{ due: number; enqueued: number }> {
  const boss = await jobEngine();
  const { installQueue, cause } = JOB_KINDS[kind];
  const due = await JOB_WORK[kind].findDue(now);
  let enqueued = 0;
  for (let i = 0; i < due.length; i += FAN_OUT_CHUNK) {
    const jobs = due.slice(i, i + FAN_OUT_CHUNK).map((installRowId) => ({ data: { installRowId, cause } satisfies InstallJobData, singletonKey: installRowId, ...expiryOf(kind) }));
    enqueued += (await boss.insert(installQueue, jobs, { returnId: true }))?.length ?? 0;
  }
  logger.info({ job: kind, due: due.length, enqueued }, `${kind} fan-out enqueued the due installs`);
  return { due: due.length, enqueued };
}

// ----- working ---------------------------------------------------------------------------------

export type JobSettings = {
  /** The kinds this process works (and asks runs of at start); default all (WORKER_JOBS). */
  kinds?: readonly JobKind[];
  /** Per-install jobs worked at once per queue in this process. */
  concurrency: number;
  /**
   * A kind's own number, in place of `concurrency` (keep-alive's KEEP_ALIVE_CONCURRENCY: its jobs
   * wait on the identity provider, not on the worker, so they run many more at once).
   */
  concurrencyOf?: Partial<Record<JobKind, number>>;
  /** Told when a job starts and ends, for the shutdown's "what was running" line. */
  onJobStart?: (kind: JobKind, installRowId: string) => void;
  onJobEnd?: (kind: JobKind, installRowId: string) => void;
};

/** Runs one per-install job; never throws: the result says how pg-boss should settle it. */
async function runInstallJob(kind: JobKind, job: Job<InstallJobData>, settings: Pick<JobSettings, "onJobStart" | "onJobEnd">): Promise<JobResult & { outcome: string }> {
  // A span per job (lib/telemetry): queue, job id, install, attempt (pg-boss counts retries from 0).
  const span = { queue: JOB_KINDS[kind].installQueue, id: job.id, installRowId: job.data?.installRowId, attempt: (job.retryCount ?? 0) + 1 };
  return traceJob(span, () => runInstallJobUntraced(kind, job, settings));
}

async function runInstallJobUntraced(kind: JobKind, job: Job<InstallJobData>, settings: Pick<JobSettings, "onJobStart" | "onJobEnd">): Promise<JobResult & { outcome: string }> {
  const installRowId = job.data?.installRowId;
  if (typeof installRowId !== "string") {
    // Not retried: it would fail the same way. Straight to the dead letters, for staff.
    return { id: job.id, status: "deadletter", output: { error: "job data has no installRowId" }, outcome: "invalid" };
  }
  settings.onJobStart?.(kind, installRowId);
  try {
    const outcome = await JOB_WORK[kind].work(installRowId);
    // Which process did it, for staff reading the job table (and the tests that two workers share the work).
    return { id: job.id, status: "completed", output: { outcome, host: hostname(), pid: process.pid }, outcome };
  } catch (error) {
    logger.warn({ job: kind, installRowId, retry: job.retryCount, err: error }, `${kind} job did not succeed; it will be retried`);
    return { id: job.id, status: "failed", output: { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }, outcome: "retrying" };
  } finally {
    settings.onJobEnd?.(kind, installRowId);
  }
}

/**
 * The worker's side: every queue worked by this process. Per-install jobs are fetched in batches of
 * half the kind's concurrency (two batches in flight, so one slow job does not stall the queue) and fetched again at
 * once while batches come back full; each job is settled on its own (completed, or failed and retried).
 */
export async function startWorkers(settings: JobSettings): Promise<void> {
  const boss = await jobEngine("worker");
  for (const kind of settings.kinds ?? JOB_KIND_NAMES) {
    const { fanOutQueue, installQueue } = JOB_KINDS[kind];
    const concurrency = settings.concurrencyOf?.[kind] ?? settings.concurrency;
    const lanes = concurrency >= 2 ? 2 : 1;
    const batchSize = Math.max(1, Math.ceil(concurrency / lanes));
    await boss.work(fanOutQueue, { pollingIntervalSeconds: 2 }, async ([job]) =>
      traceJob({ queue: fanOutQueue, id: job?.id ?? "", attempt: (job?.retryCount ?? 0) + 1 }, async () => ({ outcome: "fanned-out", ...(await fanOut(kind)) })),
    );
    await boss.work<InstallJobData>(
      installQueue,
      { batchSize, localConcurrency: lanes, perJobResults: true, burstWhenBatchFull: true, pollingIntervalSeconds: 2 },
      async (jobs) => (await Promise.all(jobs.map((job) => runInstallJob(kind, job, settings)))).map(({ id, status, output }) => ({ id, status, output })),
    );
  }
  // Every worker delivers alerts, whatever WORKER_JOBS says: they are few, and each is one POST.
  await boss.work(ALERT_QUEUES.delivery, { batchSize: ALERT_BATCH, perJobResults: true, pollingIntervalSeconds: 2 }, async (jobs) => Promise.all(jobs.map(runAlertJob)));
}

// ----- alerts (lib/alerts/) --------------------------------------------------------------------

/** Alert deliveries fetched at once: each is one POST of at most HTTP_TIMEOUT_MS. */
const ALERT_BATCH = 5;

/** One alert delivery; never throws: a failure is settled as failed, and pg-boss retries it with backoff. */
async function runAlertJob(job: Job<unknown>): Promise<JobResult> {
  try {
    return { id: job.id, status: "completed", output: await deliverAlert(job.data) };
  } catch (error) {
    return { id: job.id, status: "failed", output: { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) } };
  }
}

/**
 * Delivers the queued alerts by hand (a cron route on a host without a worker, and the tests): up to
 * `maxJobs`, until the queue has none due or `timeLimitMs` passes. A failed one is retried later with
 * the queue's backoff, as under a worker.
 */
export async function deliverQueuedAlerts(options: { maxJobs: number; timeLimitMs: number }): Promise<{ delivered: number; failed: number; more: boolean }> {
  const boss = await jobEngine();
  const summary = { delivered: 0, failed: 0, more: false };
  const stopAt = Date.now() + options.timeLimitMs;
  for (;;) {
    const room = options.maxJobs - summary.delivered - summary.failed;
    if (room <= 0 || Date.now() >= stopAt) {
      summary.more = true;
      break;
    }
    const jobs = await boss.fetch(ALERT_QUEUES.delivery, { batchSize: Math.min(room, ALERT_BATCH) });
    if (jobs.length === 0) break;
    for (const result of await Promise.all(jobs.map(runAlertJob))) {
      const attempt = jobs.find((job) => job.id === result.id)!;
      if (result.status === "completed") {
        summary.delivered += 1;
        await boss.complete(ALERT_QUEUES.delivery, attempt, result.output);
      } else {
        summary.failed += 1;
        await boss.fail(ALERT_QUEUES.delivery, attempt, result.output);
      }
    }
  }
  return summary;
}

/**
 * Asks for one run of each schedule now (a worker that starts does not wait up to an hour for the
 * first keep-alive). Throttled to one per minute per job, so a fleet of workers starting together
 * asks once.
 */
export async function requestScheduledRuns(kinds: readonly JobKind[] = JOB_KIND_NAMES): Promise<void> {
  const boss = await jobEngine("worker");
  for (const { fanOutQueue } of kinds.map((kind) => JOB_KINDS[kind])) {
    await boss.send(fanOutQueue, null, { singletonKey: "on-start", singletonSeconds: 60 });
  }
}

export type RunSummary = {
  job: JobKind;
  /** Installs the fan-out found due, and the jobs it added (an install already queued adds none). */
  due: number;
  enqueued: number;
  /** Per-install jobs this run worked, by outcome ("retrying": failed, and retried later with backoff). */
  worked: number;
  outcomes: Record<string, number>;
  /** The batch limit or the time limit ended the run with jobs possibly left: the next run goes on. */
  more: boolean;
  /** The process began stopping: the jobs not reached wait in the queue. */
  stoppedEarly: boolean;
};

export type RunOptions = {
  /** Per-install jobs to work at most in this run. */
  maxJobs: number;
  /**
   * Stop fetching after this long (a serverless function's own limit is longer); the jobs' API calls
   * end by then too, so the run answers within about this long.
   */
  timeLimitMs: number;
  concurrency: number;
  signal?: AbortSignal;
  now?: Date;
};

/**
 * One run by hand, for the cron routes (serverless hosts have no worker) and for tests: the fan-out,
 * then up to `maxJobs` of the queue's per-install jobs, `concurrency` at a time, until the queue is
 * empty, the time limit passes or the process stops. Jobs are fetched and settled the way a worker
 * does it, so a job fetched here is never run by a worker at the same time, and one that fails is
 * retried with the queue's backoff.
 */
export async function runJobNow(kind: JobKind, options: RunOptions): Promise<RunSummary> {
  const { due, enqueued } = await fanOut(kind, options.now);
  const summary: RunSummary = { job: kind, due, enqueued, ...(await workQueuedJobs(kind, options)) };
  logger.info(summary, `${kind} run finished`);
  return summary;
}

/** The second half of runJobNow: works the queued per-install jobs, without a fan-out. */
export async function workQueuedJobs(kind: JobKind, options: RunOptions): Promise<Omit<RunSummary, "job" | "due" | "enqueued">> {
  const boss = await jobEngine();
  const { installQueue } = JOB_KINDS[kind];
  const summary = { worked: 0, outcomes: {} as Record<string, number>, more: false, stoppedEarly: false };
  const stopAt = Date.now() + options.timeLimitMs;
  for (;;) {
    if (options.signal?.aborted) {
      summary.stoppedEarly = true;
      break;
    }
    const room = options.maxJobs - summary.worked;
    if (room <= 0 || Date.now() >= stopAt) {
      summary.more = true;
      break;
    }
    const jobs = await boss.fetch<InstallJobData>(installQueue, { batchSize: Math.min(room, options.concurrency) });
    if (jobs.length === 0) break;
    // The jobs' API calls end with the run (withRunDeadline): a call waiting for budget would
    // otherwise keep the route busy past its limit (a page may wait up to API_BACKGROUND_DEADLINE_MS).
    const results = await Promise.all(jobs.map((job) => withRunDeadline(stopAt, () => runInstallJob(kind, job, {}))));
    for (const result of results) {
      summary.worked += 1;
      summary.outcomes[result.outcome] = (summary.outcomes[result.outcome] ?? 0) + 1;
      // Settled with the attempt fetched (id and retryCount): a job that expired and was taken by
      // someone else meanwhile is left alone.
      const attempt = jobs.find((job) => job.id === result.id)!;
      if (result.status === "completed") await boss.complete(installQueue, attempt, result.output);
      else await boss.fail(installQueue, attempt, result.output);
    }
  }
  return summary;
}
