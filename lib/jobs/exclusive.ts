// Runs a job on one instance at a time: a Postgres advisory lock taken with try (never waited
// for), held by a transaction for the job's length. An instance that does not get it skips the run;
// a crashed instance's lock goes with its connection.
import "server-only";
import { db } from "@/lib/db/client";

/** What every job function takes (lib/jobs/keep-alive.ts, reconcile-sweep.ts). */
export type JobOptions = {
  now?: Date;
  /**
   * Aborts when the job should stop early: checked between installs, never during one, so a token
   * refresh under way always finishes (lib/shutdown.ts). Default: the process's shutdown signal.
   */
  signal?: AbortSignal;
};

export type ExclusiveRun<T> = { ran: true; result: T } | { ran: false; reason: "another instance is running this job" };

export async function runExclusively<T>(jobName: string, maxDurationMs: number, job: () => Promise<T>): Promise<ExclusiveRun<T>> {
  return db().$transaction(
    async (tx) => {
      const [row] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtext(${`job:${jobName}`})) AS locked`;
      if (!row?.locked) return { ran: false as const, reason: "another instance is running this job" as const };
      return { ran: true as const, result: await job() };
    },
    { maxWait: 10_000, timeout: maxDurationMs },
  );
}
