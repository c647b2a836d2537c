// The job engine's queues and schedules, declared once: `npm run db:migrate` creates them
// (lib/jobs/schema.ts), the worker and the cron routes work them (lib/jobs/engine.ts).
//
// Two kinds of queue:
//   - a scheduled queue receives one job per run of its schedule (pg-boss cron: one instance sends
//     it, whatever the number of workers and however their clocks disagree). Its job is the fan-out:
//     one indexed query for the installs that are due, and one per-install job for each;
//   - a per-install queue holds those per-install jobs. Its policy is `stately` with the install's
//     row id as the singleton key: at most one job per install waiting and one running, so one
//     install is never worked on twice at once, and a fan-out that finds an install already waiting
//     adds nothing (the insert is skipped). A webhook follow-up for an install whose check is
//     running waits behind it, as the one waiting job.
//
// A per-install job held by a worker that dies (SIGKILL, a lost machine) stays active until its
// expiry (expireInSeconds below, or JOB_EXPIRE_SECONDS per job kind), then counts as failed and is
// retried by another worker like any failure; every job here is safe to run twice, so one that was
// half done when its worker died does its work once (tests/integration/jobs.test.ts, "a killed worker").
//
// A per-install job that throws is retried with exponential backoff (pg-boss adds jitter), and after
// its last retry is copied to the queue's dead-letter queue, which nothing works: it is there for
// staff to look at and redrive (docs/operations.md). The next fan-out enqueues the install afresh,
// so a dead letter never stops keep-alive or the sweep for good.
//
// Not server-only: scripts/migrate.ts reads these outside Next.js.
import type { Queue } from "pg-boss";

/** pg-boss's schema, beside the app's tables (public). */
export const JOB_SCHEMA = "pgboss";

export const QUEUES = {
  /** Scheduled: finds the grants due for keep-alive and enqueues one refresh per install. */
  keepAlive: "keep-alive",
  /** Per install: refresh the install's grant if it is still due (lib/jobs/keep-alive.ts). */
  keepAliveInstall: "keep-alive.install",
  /** Scheduled: the reconcile sweep, finds the installs due for a check and enqueues one per install. */
  reconcile: "reconcile",
  /**
   * Per install: check it against the API (reconcile an active install, probe a flagged one), for the
   * sweep and for webhook follow-ups (lib/jobs/install-check.ts).
   */
  installCheck: "install-check",
  /** Scheduled: finds the active installs due for a sync and enqueues one per install. */
  sync: "sync",
  /** Per install: one run of the sync (lib/sync; lib/jobs/sync-jobs.ts); also enqueued after the callback. */
  syncInstall: "sync.install",
  /** Scheduled: finds revoked installs past SYNC_RETENTION_DAYS that still have synced data. */
  retention: "retention",
  /** Per install: delete its synced data in batches (lib/sync/retention.ts). */
  retentionInstall: "retention.install",
  keepAliveDead: "keep-alive.install.dead-letter",
  installCheckDead: "install-check.dead-letter",
  syncDead: "sync.install.dead-letter",
  retentionDead: "retention.install.dead-letter",
  /** One outbound alert to ALERT_WEBHOOK_URL (lib/alerts/deliver.ts); enqueued with the state change it reports. */
  alertDelivery: "alert.deliver",
  alertDead: "alert.deliver.dead-letter",
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/**
 * Retries of a per-install job: 60 s, then about 2, 4, 8 and 16 minutes (exponential, with jitter,
 * capped at 30 minutes), about half an hour in all. Long enough to ride out a restart of the identity
 * provider or the API, and the 55-second wait before a refresh of unknown outcome may be settled
 * (lib/oauth/refresh.ts); short against keep-alive's 7-day horizon and the sweep's 10-minute cadence,
 * which enqueue the install again anyway.
 */
const PER_INSTALL_RETRIES = { retryLimit: 5, retryDelay: 60, retryBackoff: true, retryDelayMax: 30 * 60 } as const;

/** Dead letters are kept two weeks for staff to read; nothing works them. */
const DEAD_LETTER: Omit<Queue, "name"> = { policy: "standard", retryLimit: 0, deleteAfterSeconds: 14 * 24 * 3600, retentionSeconds: 14 * 24 * 3600 };

/** In creation order: a dead-letter queue must exist before the queue that names it. */
export const QUEUE_DEFINITIONS: Queue[] = [
  { name: QUEUES.keepAliveDead, ...DEAD_LETTER },
  { name: QUEUES.installCheckDead, ...DEAD_LETTER },
  { name: QUEUES.syncDead, ...DEAD_LETTER },
  { name: QUEUES.retentionDead, ...DEAD_LETTER },
  { name: QUEUES.alertDead, ...DEAD_LETTER },
  {
    name: QUEUES.keepAliveInstall,
    policy: "stately",
    ...PER_INSTALL_RETRIES,
    deadLetter: QUEUES.keepAliveDead,
    // A refresh is two outbound calls at most (HTTP_TIMEOUT_MS each) and its lock wait: a job still
    // active after 5 minutes belongs to a dead worker, and is retried.
    expireInSeconds: 5 * 60,
    deleteAfterSeconds: 24 * 3600,
  },
  {
    name: QUEUES.installCheck,
    policy: "stately",
    ...PER_INSTALL_RETRIES,
    deadLetter: QUEUES.installCheckDead,
    // One API call, which may wait up to API_BACKGROUND_DEADLINE_MS (2 minutes) for budget.
    expireInSeconds: 5 * 60,
    deleteAfterSeconds: 24 * 3600,
  },
  {
    name: QUEUES.syncInstall,
    policy: "stately",
    ...PER_INSTALL_RETRIES,
    deadLetter: QUEUES.syncDead,
    // A first sync of a large operator pages through tens of thousands of records at the background
    // share of its budget (minutes); a run still active after 30 minutes belongs to a dead worker,
    // and its retry resumes from the checkpoint.
    expireInSeconds: 30 * 60,
    deleteAfterSeconds: 24 * 3600,
  },
  {
    name: QUEUES.retentionInstall,
    policy: "stately",
    ...PER_INSTALL_RETRIES,
    deadLetter: QUEUES.retentionDead,
    expireInSeconds: 10 * 60,
    deleteAfterSeconds: 24 * 3600,
  },
  {
    // Alerts: one job per alert, first in first out per incident (`key_strict_fifo`, keyed by the
    // alert's incident): a recovery is never delivered before the trouble it resolves, even when the
    // trouble's delivery is being retried. Alerts of other incidents are not held up. A dead-lettered
    // alert holds back its incident's later alerts until staff retry or delete it, or until it is
    // deleted with the failed jobs after 7 days (docs/operations.md "Alerts"). Retried after 30 s to
    // 1 minute, then doubling (with jitter) up to 30 minutes, 8 times: one to two hours in all. A
    // receiver that is down for a deploy or an incident gets every alert once it is back; after that
    // the alert waits in the dead letters, where staff find it (docs/operations.md "Alerts").
    name: QUEUES.alertDelivery,
    policy: "key_strict_fifo",
    retryLimit: 8,
    retryDelay: 30,
    retryBackoff: true,
    retryDelayMax: 30 * 60,
    deadLetter: QUEUES.alertDead,
    // One POST bounded by HTTP_TIMEOUT_MS (at most 60 s): a job still active after 2 minutes belongs to a dead worker.
    expireInSeconds: 2 * 60,
    deleteAfterSeconds: 7 * 24 * 3600,
  },
  // The fan-outs: `singleton` so two runs never overlap (a slow one and the next tick); a failed run
  // is retried once, then the next tick does the same work.
  { name: QUEUES.keepAlive, policy: "singleton", retryLimit: 1, retryDelay: 60, expireInSeconds: 10 * 60, deleteAfterSeconds: 24 * 3600 },
  { name: QUEUES.reconcile, policy: "singleton", retryLimit: 1, retryDelay: 60, expireInSeconds: 10 * 60, deleteAfterSeconds: 24 * 3600 },
  { name: QUEUES.sync, policy: "singleton", retryLimit: 1, retryDelay: 60, expireInSeconds: 10 * 60, deleteAfterSeconds: 24 * 3600 },
  { name: QUEUES.retention, policy: "singleton", retryLimit: 1, retryDelay: 60, expireInSeconds: 10 * 60, deleteAfterSeconds: 24 * 3600 },
];

/**
 * The schedules (cron, UTC), and why these cadences keep every install healthy at 10,000 installs:
 *
 * keep-alive, hourly. A refresh token dies 30 days after it was issued (contract §8); keep-alive
 * refreshes every grant within 7 days of that (KEEP_ALIVE_HORIZON_MS). So a grant is enqueued at most
 * an hour after it enters the horizon, and each further hour until it is refreshed: 168 runs before it
 * could expire, each with its own retries. A week also covers an outage of the identity provider, a
 * long weekend without a deploy, or a worker fleet that was down. The work per hour is one refresh per
 * install entering the horizon; at 10,000 installs all entering it in the same hour, N workers each
 * running KEEP_ALIVE_CONCURRENCY refreshes at once finish them in minutes (`npm run bench -- keepalive`
 * measures it), far inside the hour. No grant reaches its expiry while the service is up.
 *
 * reconcile sweep, every 5 minutes, for installs not checked for 10 minutes (SWEEP_MIN_INTERVAL_MS),
 * so each install is checked every 10 to 15 minutes: one API call, a thousandth of the install's
 * budget for a minute (contract §8), paid from the background share. At 10,000 installs that is about
 * 17 checks a second across the workers.
 *
 * sync, every 5 minutes (offset from the sweep), for active installs not synced for
 * SYNC_INTERVAL_MINUTES (15): each run is incremental but for a full pass a day (lib/sync/strategy.ts),
 * paid from the background share, so pages keep the reserve. Retention, daily at 03:37 UTC.
 */
export const SCHEDULES: { queue: QueueName; cron: string }[] = [
  { queue: QUEUES.keepAlive, cron: "7 * * * *" },
  { queue: QUEUES.reconcile, cron: "*/5 * * * *" },
  { queue: QUEUES.sync, cron: "2-59/5 * * * *" },
  { queue: QUEUES.retention, cron: "37 3 * * *" },
];
