// The job engine's queues and schedules: `npm run db:migrate` creates them (lib/jobs/schema.ts), the
// worker and the cron routes work them (lib/jobs/engine.ts). Each scheduled job kind's queues and
// schedule are derived from its declaration in lib/jobs/kinds.ts; the alert queues are declared here.
//
// Two kinds of queue for each job kind:
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
// expiry (its kind's expireInSeconds in lib/jobs/kinds.ts, or JOB_EXPIRE_SECONDS), then counts as
// failed and is retried by another worker like any failure; every job here is safe to run twice, so one that was
// half done when its worker died does its work once (tests/integration/jobs.test.ts, "a killed worker").
//
// A per-install job that throws is retried with exponential backoff (pg-boss adds jitter), and after
// its last retry is copied to the queue's dead-letter queue, which nothing works: it is there for
// staff to look at and redrive (docs/operations.md). The next fan-out enqueues the install afresh,
// so a dead letter never stops keep-alive or the sweep for good.
//
// Not server-only: scripts/migrate.ts reads these outside Next.js.
import type { Queue } from "pg-boss";
import { JOB_KINDS } from "./kinds";

/** pg-boss's schema, beside the app's tables (public). */
export const JOB_SCHEMA = "pgboss";

/** Outbound alerts, one job per alert to ALERT_WEBHOOK_URL (lib/alerts/deliver.ts); enqueued with the state change it reports. */
export const ALERT_QUEUES = {
  delivery: "alert.deliver",
  deadLetter: "alert.deliver.dead-letter",
} as const;

const KINDS = Object.values(JOB_KINDS);

/** Dead letters are kept two weeks for staff to read; nothing works them. */
const DEAD_LETTER: Omit<Queue, "name"> = { policy: "standard", retryLimit: 0, deleteAfterSeconds: 14 * 24 * 3600, retentionSeconds: 14 * 24 * 3600 };

/** In creation order: a dead-letter queue must exist before the queue that names it. */
export const QUEUE_DEFINITIONS: Queue[] = [
  ...KINDS.map((kind) => ({ name: kind.deadLetterQueue, ...DEAD_LETTER })),
  { name: ALERT_QUEUES.deadLetter, ...DEAD_LETTER },
  // The per-install queues: the kind's retries and expiry (lib/jobs/kinds.ts), its dead letters, and
  // completed jobs kept a day for staff reading the job table.
  ...KINDS.map((kind): Queue => ({
    name: kind.installQueue,
    policy: "stately",
    ...kind.retries,
    deadLetter: kind.deadLetterQueue,
    expireInSeconds: kind.expireInSeconds,
    deleteAfterSeconds: 24 * 3600,
  })),
  {
    // Alerts: one job per alert, first in first out per incident (`key_strict_fifo`, keyed by the
    // alert's incident): a recovery is never delivered before the trouble it resolves, even when the
    // trouble's delivery is being retried. Alerts of other incidents are not held up. A dead-lettered
    // alert holds back its incident's later alerts until staff retry or delete it, or until it is
    // deleted with the failed jobs after 7 days (docs/operations.md "Alerts"). Retried after 30 s to
    // 1 minute, then doubling (with jitter) up to 30 minutes, 8 times: one to two hours in all. A
    // receiver that is down for a deploy or an incident gets every alert once it is back; after that
    // the alert waits in the dead letters, where staff find it (docs/operations.md "Alerts").
    name: ALERT_QUEUES.delivery,
    policy: "key_strict_fifo",
    retryLimit: 8,
    retryDelay: 30,
    retryBackoff: true,
    retryDelayMax: 30 * 60,
    deadLetter: ALERT_QUEUES.deadLetter,
    // One POST bounded by HTTP_TIMEOUT_MS (at most 60 s): a job still active after 2 minutes belongs to a dead worker.
    expireInSeconds: 2 * 60,
    deleteAfterSeconds: 7 * 24 * 3600,
  },
  // The fan-outs: `singleton` so two runs never overlap (a slow one and the next tick); a failed run
  // is retried once, then the next tick does the same work.
  ...KINDS.map((kind): Queue => ({ name: kind.fanOutQueue, policy: "singleton", retryLimit: 1, retryDelay: 60, expireInSeconds: 10 * 60, deleteAfterSeconds: 24 * 3600 })),
];

/** The schedules (cron, UTC), one per kind: lib/jobs/kinds.ts has the cadences and why they serve 10,000 installs. */
export const SCHEDULES: { queue: string; cron: string }[] = KINDS.map((kind) => ({ queue: kind.fanOutQueue, cron: kind.cron }));
