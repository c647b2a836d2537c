// Background work: token refreshes, the worker's jobs and the cron routes (lib/jobs/).
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";
import { JOB_KIND_NAMES, type JobKind } from "@/lib/jobs/kinds";

// The job kinds these variables name are the ones declared in lib/jobs/kinds.ts (a kind a fork adds
// or removes there is accepted or refused here with no other change).
const KIND_PATTERN = JOB_KIND_NAMES.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
const EXPIRY_ENTRY = new RegExp(`^(${KIND_PATTERN})=(\\d{1,5})$`);

export const jobsShape = {
  /**
   * Token refreshes of different installs at once per process (lib/oauth/refresh-lock.ts): size it to
   * what the identity provider can take. It costs no connections: the locks of all of a process's
   * refreshes share one (plus one for each refresh that waits for another process's lock). 50 serves
   * 50 installs expiring together in one round of the identity provider's latency.
   */
  REFRESH_CONCURRENCY: z.coerce.number().int().min(1).max(200).default(50),
  /**
   * Per-install jobs (install checks, syncs, retention) each worker process runs at once, per queue
   * (lib/jobs/engine.ts); keep-alive has its own, KEEP_ALIVE_CONCURRENCY. Add workers to go faster.
   * The cron routes use it as their batch's concurrency.
   */
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(10),
  /**
   * Keep-alive refreshes each worker process runs at once (lib/jobs/engine.ts), apart from
   * JOB_CONCURRENCY. A keep-alive job is one token-endpoint call and a few short statements: its time
   * is the identity provider's latency, not the worker's CPU, so its rate is this number ÷ that
   * latency (25 at 200 ms: 125 refreshes a second per worker, 10,000 installs in under two minutes).
   * Under REFRESH_CONCURRENCY (50) by default, so a worker's syncs and install checks still find a
   * refresh slot while keep-alive runs; above it, the extra refreshes only wait for a slot.
   * The keep-alive cron route uses it as its batch's concurrency.
   */
  KEEP_ALIVE_CONCURRENCY: z.coerce.number().int().min(1).max(200).default(25),
  /**
   * Which jobs this worker process runs (comma-separated kinds of lib/jobs/kinds.ts: keep-alive,
   * reconcile, sync, retention; default all). Lets a deployment give the sync its own workers, apart
   * from keep-alive's.
   */
  WORKER_JOBS: z
    .string()
    .transform((value) => value.split(",").map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.enum(JOB_KIND_NAMES)).min(1, "name at least one job"))
    .optional(),
  /**
   * How long a per-install job may stay in a worker's hands before it counts as abandoned (its worker
   * was killed, its machine lost) and is retried by another worker: comma-separated `<job>=<seconds>`
   * (the kinds of lib/jobs/kinds.ts; 1 s to 24 h, pg-boss's bound). A job not named keeps its kind's
   * default (expireInSeconds in lib/jobs/kinds.ts: 5, 5, 30 and 10 minutes). Shorter: a dead worker's job is
   * picked up sooner; but never shorter than the job can honestly take, or a slow job is run twice.
   * Read where a job is enqueued (lib/jobs/enqueue.ts, `expiryOf`), so give every process the same value.
   */
  JOB_EXPIRE_SECONDS: z
    .string()
    .transform((value, ctx) => {
      const expiry: Partial<Record<JobKind, number>> = {};
      for (const entry of value.split(",").map((s) => s.trim()).filter(Boolean)) {
        const match = EXPIRY_ENTRY.exec(entry);
        const seconds = Number(match?.[2]);
        if (!match || seconds < 1 || seconds > 24 * 3600) {
          ctx.addIssue({ code: "custom", message: `each entry must be \`<${JOB_KIND_NAMES.join("|")}>=<seconds, 1-86400>\`, e.g. \`${JOB_KIND_NAMES[0]}=300\`` });
          return z.NEVER;
        }
        expiry[match[1] as JobKind] = seconds;
      }
      return expiry;
    })
    .optional(),
  /**
   * How long a cron route (/api/cron/*) keeps working queued jobs before it answers; keep it inside
   * your serverless platform's function time limit. The jobs' API calls end by then too (a page
   * that would wait longer for budget is left for the next run, its checkpoint kept).
   */
  CRON_TIME_LIMIT_SECONDS: z.coerce.number().int().min(1).max(900).default(25),
};
