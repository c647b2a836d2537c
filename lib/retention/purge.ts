// The history purge: deletes the rows of each `window` rule (./rules.ts) older than the table's
// window, on the retention job's schedule (lib/jobs/kinds.ts, lib/jobs/retention-jobs.ts).
//
// How it stays off the hot paths (the sync writing sync_runs, the webhook route writing deliveries,
// the console reading both):
//   - batches: each DELETE takes at most RETENTION_BATCH_ROWS (5,000) rows, in a statement of its own
//     (its own short transaction), so no lock is held for long and no transaction grows with the table;
//   - by index: the batch is the next rows of the table's (time, id) index, oldest first, after the
//     previous batch's last row (a keyset walk). Rows the rule keeps whatever their age (each
//     install's latest sync run) are stepped over once per run, never read again batch after batch;
//   - only rows nobody writes: past the window (days), and for sync_runs never the newest finished run
//     of an install and resource, nor a run newer than it (one still going), for alert_digests never
//     one still open, so a batch never waits for a hot path's row lock, nor takes the row a reader wants;
//   - bounded in time: a run stops after its time limit or when the process stops, between batches;
//     it keeps no state, the rows left are the state, so the next run (an hour later) goes on.
//
// Why not partitions: declaratively partitioning sync_runs by day would make the purge a DROP of a
// day's partition, but every query that reads one install's runs (the due query, the console, the
// dashboard) would probe every partition's index, the "latest run per resource" rows would have to be
// copied out of a partition before it is dropped, and Prisma's migrations cannot express it. A batched
// delete of a day's rows at 10,000 installs (3.1 million sync runs and refresh attempts) took a median
// of 101.5 s in the storage bench on a busy two-core machine, about 4 s an hourly run
// (`npm run bench -- storage`, docs/operations.md "Database size"); partition when that stops being true.
import "server-only";
import { db } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { shutdownSignal } from "@/lib/shutdown";
import { recordRetentionPurge } from "@/lib/telemetry";
import { RETENTION_RULES, windowRules, type RetainedTable, type RetentionRule, type WindowPurge } from "./rules";

/** A table's job key in the retention kind's queue (lib/jobs/retention-jobs.ts), beside install row ids. */
const TABLE_KEY_PREFIX = "table:";

export function tableJobKey(table: RetainedTable): string {
  return `${TABLE_KEY_PREFIX}${table}`;
}

/** The table a job key names, if it names a window rule's table; null otherwise (an install row id). */
export function tableOfJobKey(key: string): RetainedTable | null {
  if (!key.startsWith(TABLE_KEY_PREFIX)) return null;
  const table = key.slice(TABLE_KEY_PREFIX.length);
  return windowRules().some((entry) => entry.table === table) ? (table as RetainedTable) : null;
}

/** A run of a table's purge stops after this long (the retention kind's jobs expire after 10 minutes). */
const RUN_TIME_LIMIT_MS = 5 * 60_000;

function windowOf(rule: WindowPurge): number {
  return env()[rule.setting];
}

function windowRuleOf(table: RetainedTable): WindowPurge {
  const rule: RetentionRule["purge"] = RETENTION_RULES[table].purge;
  if (rule.kind !== "window") throw new Error(`${table} has no window rule`);
  return rule;
}

/** Now minus the table's window: rows older than this are due. */
export function cutoffOf(table: RetainedTable, now = new Date()): Date {
  return new Date(now.getTime() - windowOf(windowRuleOf(table)) * 86_400_000);
}

/**
 * The tables with a row older than their window: one read of the head of each table's time index.
 * A table whose only old rows are kept ones (sync_runs' latest per install) is due too; its run then
 * steps over them and deletes nothing, which costs one index walk over those rows.
 */
export async function findTablesDueForPurge(now = new Date()): Promise<string[]> {
  const due: string[] = [];
  for (const { table, rule } of windowRules()) {
    const [row] = await db().$queryRaw<{ due: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM ${Prisma.raw(table)} d WHERE d.${Prisma.raw(rule.timeColumn)} < ${cutoffOf(table, now)} ${onlyWhereSql(rule)}) AS due`;
    if (row?.due) due.push(tableJobKey(table));
  }
  return due;
}

export type TablePurgeSummary = {
  table: RetainedTable;
  cutoff: Date;
  /** Rows deleted by this run. */
  deleted: number;
  /** Rows past the window the run looked at: deleted ones, and those the rule keeps. */
  scanned: number;
  batches: number;
  /** Its time limit, maxBatches or the process stopping ended it: the next run goes on. */
  stoppedEarly: boolean;
  durationMs: number;
};

export type TablePurgeOptions = {
  now?: Date;
  signal?: AbortSignal;
  batchRows?: number;
  maxBatches?: number;
  timeLimitMs?: number;
};

/**
 * Whether a row `t` may go although the rule keeps its group's newest: a newer row of its group exists.
 *
 * It is a column of the batch (a correlated EXISTS in the select list), never a condition of the
 * DELETE. PostgreSQL turns an EXISTS in a WHERE into a semi join, and with a few thousand batch rows
 * against tens of millions it picks a hash join: a sequential scan of the whole table for every batch.
 * At 10,000 installs that made one simulated day's purge of sync_runs run for over 20 minutes without
 * finishing; read per row, it takes one to two minutes (docs/operations.md "Database size"). In the select list it stays a subplan run once per batch row, an index probe on
 * (group, time) that stops at the first newer row: the cost of a batch no longer grows with the table.
 * tests/integration/retention.test.ts checks the plan.
 */
function deletableSql(rule: WindowPurge, table: string): Prisma.Sql {
  const keep = rule.keepNewestPer;
  if (!keep) return Prisma.sql`true`;
  const sameGroup = keep.columns.map((column) => Prisma.sql`n.${Prisma.raw(column)} = t.${Prisma.raw(column)}`);
  const time = Prisma.raw(rule.timeColumn);
  return Prisma.sql`EXISTS (SELECT 1 FROM ${Prisma.raw(table)} n WHERE ${Prisma.join(sameGroup, " AND ")}
    AND n.${time} > t.${time} ${keep.newerWhere ? Prisma.sql`AND ${Prisma.raw(keep.newerWhere)}` : Prisma.empty})`;
}

/** The rule's condition on the row itself (`d`), if it has one: rows past the window without it stay. */
function onlyWhereSql(rule: WindowPurge): Prisma.Sql {
  return rule.onlyWhere ? Prisma.sql`AND ${Prisma.raw(rule.onlyWhere)}` : Prisma.empty;
}

/**
 * The statement of one batch: the next `batchRows` rows past the window after the cursor, of which it
 * deletes those the rule lets go. Exported for the test that reads its plan.
 */
export function purgeBatchStatement(table: RetainedTable, cutoff: Date, after: { at: Date; id: string } | null, batchRows: number): Prisma.Sql {
  const rule = windowRuleOf(table);
  const t = Prisma.raw(table);
  const time = Prisma.raw(rule.timeColumn);
  const id = Prisma.raw(rule.idColumn);
  // The cursor compares as the index orders it: the id as its own type (a uuid, or a sequence's bigint).
  const afterCursor = after ? Prisma.sql`AND (t.${time}, t.${id}) > (${after.at}, ${after.id}::${Prisma.raw(rule.idType)})` : Prisma.empty;
  return Prisma.sql`
    WITH batch AS (
      SELECT t.${id} AS id, t.${time} AS at, ${deletableSql(rule, table)} AS deletable FROM ${t} t
      WHERE t.${time} < ${cutoff} ${afterCursor}
      ORDER BY t.${time}, t.${id} LIMIT ${batchRows}
    ), gone AS (
      DELETE FROM ${t} d USING batch b WHERE d.${id} = b.id AND b.deletable ${onlyWhereSql(rule)}
      RETURNING 1
    ), last AS (SELECT at, id FROM batch ORDER BY at DESC, id DESC LIMIT 1)
    SELECT (SELECT count(*) FROM batch)::int AS scanned, (SELECT count(*) FROM gone)::int AS deleted,
           (SELECT at FROM last) AS last_at, (SELECT id::text FROM last) AS last_id`;
}

async function purgeBatch(
  table: RetainedTable,
  cutoff: Date,
  after: { at: Date; id: string } | null,
  batchRows: number,
): Promise<{ scanned: number; deleted: number; last: { at: Date; id: string } | null }> {
  const [row] = await db().$queryRaw<{ scanned: number; deleted: number; last_at: Date | null; last_id: string | null }[]>(
    purgeBatchStatement(table, cutoff, after, batchRows),
  );
  const last = row?.last_at && row.last_id ? { at: row.last_at, id: row.last_id } : null;
  return { scanned: row?.scanned ?? 0, deleted: row?.deleted ?? 0, last };
}

/**
 * Deletes the table's rows past its window, batch after batch, until none is left, or its time limit,
 * `maxBatches` or its signal stops it (`stoppedEarly`: the next run goes on where this one stopped).
 * Records the run in retention_purges (the console's "last purge") and in the metrics.
 */
export async function purgeTable(table: RetainedTable, options: TablePurgeOptions = {}): Promise<TablePurgeSummary> {
  const rule = windowRuleOf(table);
  const { now = new Date(), signal = shutdownSignal(), maxBatches = Number.POSITIVE_INFINITY, timeLimitMs = RUN_TIME_LIMIT_MS } = options;
  // A table whose rows take others along (alert digests, their members) deletes fewer per statement.
  const batchRows = Math.min(options.batchRows ?? env().RETENTION_BATCH_ROWS, rule.maxBatchRows ?? Number.POSITIVE_INFINITY);
  const startedAt = new Date();
  const started = performance.now();
  const cutoff = cutoffOf(table, now);
  const summary: TablePurgeSummary = { table, cutoff, deleted: 0, scanned: 0, batches: 0, stoppedEarly: false, durationMs: 0 };
  let after: { at: Date; id: string } | null = null;
  for (;;) {
    if (signal.aborted || summary.batches >= maxBatches || performance.now() - started >= timeLimitMs) {
      summary.stoppedEarly = true;
      break;
    }
    const batch = await purgeBatch(table, cutoff, after, batchRows);
    summary.batches += 1;
    summary.scanned += batch.scanned;
    summary.deleted += batch.deleted;
    if (batch.scanned < batchRows || !batch.last) break;
    after = batch.last;
  }
  summary.durationMs = Math.round(performance.now() - started);
  const outcome = summary.stoppedEarly ? "more" : "done";
  await db().retentionPurge.upsert({
    where: { tableName: table },
    create: { tableName: table, startedAt, finishedAt: new Date(), cutoff, deletedRows: summary.deleted, batches: summary.batches, outcome },
    update: { startedAt, finishedAt: new Date(), cutoff, deletedRows: summary.deleted, batches: summary.batches, outcome },
  });
  recordRetentionPurge(table, outcome, summary.deleted, summary.durationMs / 1000);
  logger.info({ ...summary, cutoff: cutoff.toISOString(), windowDays: windowOf(rule) }, `retention purge of ${table} ${outcome === "done" ? "finished" : "stopped; the next run goes on"}`);
  return summary;
}

export type LastPurge = { table: string; finishedAt: Date; deletedRows: number; batches: number; outcome: string; durationMs: number };

/** Each table's last purge run, for the staff console; empty before the first. */
export async function fetchLastPurges(): Promise<LastPurge[]> {
  const rows = await db().retentionPurge.findMany({ orderBy: { tableName: "asc" } });
  return rows.map((row) => ({
    table: row.tableName,
    finishedAt: row.finishedAt,
    deletedRows: row.deletedRows,
    batches: row.batches,
    outcome: row.outcome,
    durationMs: row.finishedAt.getTime() - row.startedAt.getTime(),
  }));
}
