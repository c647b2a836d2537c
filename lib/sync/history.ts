// What an ended run leaves in the history (issue 34): its sync_runs row only when something happened,
// and its day's counts (sync_days) always.
//
// At the default cadence every resource of every install runs every 15 minutes, and almost every run
// reads the same records back: a row each was 288 rows per install per day, nearly all "completed,
// nothing changed" (docs/operations.md "Database size"). So a quiet run (it changed and cleaned no record, and it
// ended as the resource's previous run did: completed, or skipped for the same reason) deletes the row
// it would have written and is only counted. Every failure, every stop, every run that changed data,
// and the first run of a new outcome (a recovery, a scope lost) keep their row. The latest outcome of
// each resource is in sync_latest whatever the run was (./latest.ts), for the console, the alerts and
// freshness. docs/spec-gaps.md A195.
//
// A run that cannot be quiet (the resource's first, or one after a failure or a stop) writes its
// "running" row when it starts, as every run did; one that may be quiet writes it with its first page
// that changes a record, or at its end. So a run killed mid-way still leaves its "running" row whenever
// it had written something, and a quiet run never writes a row: rows written and deleted again left the
// (started_at, id) index's pages nearly empty and never reused (npm run bench -- storage: that index
// held every run's entry, 150 MB at 1,000 installs after nine days).
import "server-only";
import { randomUUID } from "node:crypto";
import type { Tx } from "@/lib/db/client";
import type { EndedRun } from "./latest";

/** A run's row: its id, chosen at the start, and whether the row is written yet. */
export type RunRow = { id: string; installRowId: string; resource: string; startedAt: Date; written: boolean };

async function previousOutcome(tx: Tx, installRowId: string, resource: string) {
  const [previous] = await tx.$queryRaw<{ outcome: string; error_kind: string | null }[]>`
    SELECT outcome, error_kind FROM sync_latest WHERE install_row_id = ${installRowId}::uuid AND resource = ${resource}`;
  return previous;
}

/** Writes the run's "running" row, once: at its start when it cannot be quiet, else at its first change. */
export async function writeRunningRow(tx: Tx, row: RunRow): Promise<void> {
  if (row.written) return;
  await tx.syncRun.create({ data: { id: row.id, installRowId: row.installRowId, resource: row.resource, startedAt: row.startedAt, outcome: "running" }, select: { id: true } });
  row.written = true;
}

/** The run's row as it starts: written now unless the resource's previous run completed or was skipped. */
export async function startRunRow(tx: Tx, installRowId: string, resource: string, startedAt: Date): Promise<RunRow> {
  const row: RunRow = { id: randomUUID(), installRowId, resource, startedAt, written: false };
  const previous = await previousOutcome(tx, installRowId, resource);
  if (previous?.outcome !== "completed" && previous?.outcome !== "skipped") await writeRunningRow(tx, row);
  return row;
}

/** An ended run (./latest.ts; its `startedAt`'s UTC date is the day it is counted in) with what its row keeps. */
export type RunRecord = EndedRun & {
  row: RunRow;
  passKind: string | null;
  passId: string | null;
  durationMs: number;
  pages: number;
  recordsUpserted: number;
  recordsDeleted: number;
  /** Records inserted, changed, un-deleted or removed by the configuration (their updated_at moved). */
  recordsChanged: number;
  /** Records stored with text made safe (lib/db/storable-text.ts): a run that cleaned any keeps its row, for staff to see. */
  recordsCleaned: number;
  requests: number;
};

/**
 * Ends the run's row (writing it first if it was not yet; a quiet run has none) and counts it in its day. Runs in the
 * transaction that records the resource's latest outcome, before it: `previous` is read from there.
 */
export async function recordRunHistory(tx: Tx, run: RunRecord): Promise<"kept" | "quiet"> {
  const previous = await previousOutcome(tx, run.installRowId, run.resource);
  const changed = run.recordsChanged + run.recordsDeleted;
  const quiet =
    changed === 0 &&
    run.recordsCleaned === 0 &&
    (run.outcome === "completed" || run.outcome === "skipped") &&
    previous !== undefined &&
    previous.outcome === run.outcome &&
    previous.error_kind === run.errorKind;

  if (!quiet) {
    const ended = {
      passKind: run.passKind,
      passId: run.passId,
      finishedAt: run.finishedAt,
      durationMs: run.durationMs,
      pages: run.pages,
      recordsUpserted: run.recordsUpserted,
      recordsDeleted: run.recordsDeleted,
      recordsCleaned: run.recordsCleaned,
      requests: run.requests,
      outcome: run.outcome,
      errorKind: run.errorKind,
    };
    // An upsert: the row may not be written yet (a run that may have been quiet), or its page's
    // transaction may have rolled back.
    await tx.syncRun.upsert({
      where: { id: run.row.id },
      create: { id: run.row.id, installRowId: run.row.installRowId, resource: run.row.resource, startedAt: run.row.startedAt, ...ended },
      update: ended,
      select: { id: true },
    });
  }
  const quietRuns = quiet ? 1 : 0;
  const failures = run.outcome === "failed" ? 1 : 0;
  await tx.$executeRaw`
    INSERT INTO sync_days AS d (id, install_row_id, resource, day, runs, quiet_runs, failures, records_changed, last_quiet_at)
    VALUES (gen_random_uuid(), ${run.installRowId}::uuid, ${run.resource}, (${run.startedAt}::timestamptz AT TIME ZONE 'UTC')::date,
      1, ${quietRuns}, ${failures}, ${changed}, ${quiet ? run.finishedAt : null}::timestamptz)
    ON CONFLICT (install_row_id, day, resource) DO UPDATE SET
      runs = d.runs + 1, quiet_runs = d.quiet_runs + EXCLUDED.quiet_runs, failures = d.failures + EXCLUDED.failures,
      records_changed = d.records_changed + EXCLUDED.records_changed,
      last_quiet_at = GREATEST(d.last_quiet_at, EXCLUDED.last_quiet_at)`;
  return quiet ? "quiet" : "kept";
}
