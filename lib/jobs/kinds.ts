// The scheduled job kinds, declared once. For each kind: its three queues, its schedule, who its
// per-install jobs say asked for them, and their retry and expiry policy. Every list of job kinds is
// derived from JOB_KINDS below:
//   - the queues and schedules `npm run db:migrate` creates (./queues.ts, ./schema.ts);
//   - `JobKind`, and the kinds WORKER_JOBS and JOB_EXPIRE_SECONDS accept (lib/env/jobs.ts);
//   - the kinds a worker runs when WORKER_JOBS is unset (./engine.ts);
//   - the cron route, `/api/cron/<kind>` (app/api/cron/[job]/route.ts).
// What a kind does, its due query and its per-install work, is the other half of its declaration:
// JOB_WORK in ./engine.ts, which the compiler holds to exactly these kinds.
//
// Why two halves: the senders (./enqueue.ts, which the install state machine, the webhooks and the
// console use) and scripts/migrate.ts need the queue names, and must not import the work, which
// imports those senders in turn (a circle; .dependency-cruiser.mjs). So this file is facts only: it
// imports nothing, and is not server-only, since scripts/migrate.ts and lib/env read it outside Next.js.
//
// The queue names are what existing databases hold (pg-boss keys jobs by queue name): renaming one
// leaves its jobs behind in the old queue. A new kind takes new names; see docs/adding-a-feature.md.

/** Who asked for a per-install job: the fan-out of a kind (its `cause`), or one of the senders in ./enqueue.ts. */
export type JobCause = "keep-alive" | "sweep" | "webhook" | "schedule" | "install" | "staff";

/** A per-install job's retries (pg-boss's queue options of the same names). */
export type JobRetries = { retryLimit: number; retryDelay: number; retryBackoff: boolean; retryDelayMax: number };

export type JobKindDeclaration = {
  /** The scheduled queue: one job per tick of `cron`, whose work is the fan-out. Named after the kind. */
  fanOutQueue: string;
  /** The per-install queue the fan-out fills: stately, keyed by install (./queues.ts says why). */
  installQueue: string;
  /** Where a per-install job goes after its last retry; nothing works it, staff read it (docs/operations.md). */
  deadLetterQueue: string;
  /** When the fan-out runs: pg-boss cron, in UTC. */
  cron: string;
  /** What the fan-out's per-install jobs record as having asked for them. */
  cause: JobCause;
  retries: JobRetries;
  /**
   * How long a worker may hold a per-install job before it counts as abandoned (its worker died) and is
   * retried elsewhere; JOB_EXPIRE_SECONDS overrides it per kind. Never shorter than the job can honestly take.
   */
  expireInSeconds: number;
};

/**
 * Retries of a per-install job: 60 s, then about 2, 4, 8 and 16 minutes (exponential, with jitter,
 * capped at 30 minutes), about half an hour in all. Long enough to ride out a restart of the identity
 * provider or the API, and the 55-second wait before a refresh of unknown outcome may be settled
 * (lib/oauth/refresh.ts); short against keep-alive's 7-day horizon and the sweep's 10-minute cadence,
 * which enqueue the install again anyway.
 */
const PER_INSTALL_RETRIES: JobRetries = { retryLimit: 5, retryDelay: 60, retryBackoff: true, retryDelayMax: 30 * 60 };

/**
 * The kinds, and why these cadences keep every install healthy at 10,000 installs:
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
 * paid from the background share, so pages keep the reserve. Retention, hourly at :37: the revoked
 * installs' data and each table's history past its window (lib/retention/rules.ts), a job per table.
 */
export const JOB_KINDS = {
  "keep-alive": {
    fanOutQueue: "keep-alive",
    /** Refresh the install's grant if it is still due (lib/jobs/keep-alive.ts). */
    installQueue: "keep-alive.install",
    deadLetterQueue: "keep-alive.install.dead-letter",
    cron: "7 * * * *",
    cause: "keep-alive",
    retries: PER_INSTALL_RETRIES,
    // A refresh is two outbound calls at most (HTTP_TIMEOUT_MS each) and its lock wait: a job still
    // active after 5 minutes belongs to a dead worker, and is retried.
    expireInSeconds: 5 * 60,
  },
  reconcile: {
    fanOutQueue: "reconcile",
    /**
     * Check the install against the API (reconcile an active install, probe a flagged one), for the
     * sweep and for webhook follow-ups (lib/jobs/install-check.ts).
     */
    installQueue: "install-check",
    deadLetterQueue: "install-check.dead-letter",
    cron: "*/5 * * * *",
    cause: "sweep",
    retries: PER_INSTALL_RETRIES,
    // One API call, which may wait up to API_BACKGROUND_DEADLINE_MS (2 minutes) for budget.
    expireInSeconds: 5 * 60,
  },
  sync: {
    fanOutQueue: "sync",
    /** One run of the sync (lib/sync; lib/jobs/sync-jobs.ts); also enqueued after the callback and by "Sync now". */
    installQueue: "sync.install",
    deadLetterQueue: "sync.install.dead-letter",
    cron: "2-59/5 * * * *",
    cause: "schedule",
    retries: PER_INSTALL_RETRIES,
    // A first sync of a large operator pages through tens of thousands of records at the background
    // share of its budget (minutes); a run still active after 30 minutes belongs to a dead worker,
    // and its retry resumes from the checkpoint.
    expireInSeconds: 30 * 60,
  },
  retention: {
    fanOutQueue: "retention",
    /**
     * Delete a revoked or lost (REINSTALL_NEEDED) install's synced data in batches, once SYNC_RETENTION_DAYS have passed
     * (lib/sync/retention.ts), and each table's history past its window (lib/retention/purge.ts): keyed
     * by install row id or by `table:<name>` (lib/jobs/retention-jobs.ts).
     */
    installQueue: "retention.install",
    deadLetterQueue: "retention.install.dead-letter",
    // Hourly: each run deletes an hour's worth of history (about 120,000 sync runs at 10,000
    // installs), and a run its time limit stopped goes on within the hour instead of a day later.
    cron: "37 * * * *",
    cause: "schedule",
    retries: PER_INSTALL_RETRIES,
    // A table's run stops itself after 5 minutes (lib/retention/purge.ts) and an install's after
    // 1,000 batches: a job still active after 10 belongs to a dead worker.
    expireInSeconds: 10 * 60,
  },
} as const satisfies Record<string, JobKindDeclaration>;

export type JobKind = keyof typeof JOB_KINDS;

/** The kinds' names, in declaration order (the order the worker starts them and the migration creates their queues). */
export const JOB_KIND_NAMES = Object.keys(JOB_KINDS) as [JobKind, ...JobKind[]];

/** Whether a name from outside (a URL, an environment variable) is a declared kind: an own key, never an inherited one. */
export function isJobKind(name: string): name is JobKind {
  return Object.hasOwn(JOB_KINDS, name);
}
