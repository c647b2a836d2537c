// The retention kind's work (lib/jobs/kinds.ts): one scheduled kind for everything that deletes by
// age, with two sorts of key in its queue.
//
//   an install's row id     a revoked or lost install's synced data, SYNC_RETENTION_DAYS after the
//                           uninstall (lib/sync/retention.ts; purgeInstallJob in ./sync-jobs.ts)
//   `table:<name>`          a table's history past its window (lib/retention/purge.ts, the `window`
//                           rules of lib/retention/rules.ts): sync runs, deliveries, the audit logs
//
// Why one kind, and tables as keys: the engine's kinds fan out to per-key jobs in a stately queue
// (lib/jobs/queues.ts), at most one waiting and one running per key. Keyed by table, that gives the
// history purge what it needs with nothing new: one run per table at a time however many workers
// poll, each table's run its own job (a slow table never holds up another, and a failed one is
// retried alone), the same schedule, cron route (/api/cron/retention), WORKER_JOBS name, spans and
// dead letters as the install purge. The due query returns the install keys and the table keys
// together; the work tells them apart by the prefix, which no row id (a uuid) has.
import "server-only";
import { findTablesDueForPurge, purgeTable, tableOfJobKey } from "@/lib/retention/purge";
import { findInstallsDueForPurge, purgeInstallJob } from "./sync-jobs";

/** The revoked and lost installs whose synced data is due, then the tables with rows past their window. */
export async function findRetentionDue(now = new Date()): Promise<string[]> {
  return [...(await findInstallsDueForPurge(now)), ...(await findTablesDueForPurge(now))];
}

/** One key's purge: "purged" or "more" (its batches or time ran out; the next run goes on). */
export async function retentionJob(key: string): Promise<string> {
  const table = tableOfJobKey(key);
  if (table === null) return purgeInstallJob(key);
  const { stoppedEarly } = await purgeTable(table);
  return stoppedEarly ? "more" : "purged";
}
