// How fresh the install's local copy of each resource is (issue 13): the dashboard reads the copy
// the sync keeps (lib/sync), so every page says "as of" when, and a page whose resource has never
// finished a pass says the copy is still being made. One place for the question "what does the
// local copy cover?", so each page asks it the same way.
import "server-only";
import { db } from "@/lib/db/client";
import { SYNCED_RESOURCES, type ResourceName } from "@/lib/sync/resources";

export type ResourceFreshness = {
  resource: ResourceName;
  /** When the last pass over the whole list ended (full or incremental): the copy is complete as of then. Null: no pass has ended yet. */
  asOf: Date | null;
  /** A pass is under way (started then), or null. */
  passStartedAt: Date | null;
  /** The latest run of this resource's sync, whatever its outcome: why the copy may be older than it should be. */
  lastRun: { outcome: string; errorKind: string | null; startedAt: Date; finishedAt: Date | null } | null;
};

/** Two indexed reads: the checkpoints, and the latest run of each resource; one entry per registered resource. */
export async function loadFreshness(installRowId: string): Promise<Record<ResourceName, ResourceFreshness>> {
  const [checkpoints, runs] = await Promise.all([
    db().syncCheckpoint.findMany({
      where: { installRowId },
      select: { resource: true, lastPassEndedAt: true, passId: true, passStartedAt: true },
    }),
    // The latest ended run (sync_latest: a quiet run keeps no sync_runs row, lib/sync/history.ts), or
    // a run still "running" in sync_runs that started after it.
    db().$queryRaw<{ resource: string; outcome: string; error_kind: string | null; started_at: Date; finished_at: Date | null }[]>`
      SELECT DISTINCT ON (resource) resource, outcome, error_kind, started_at, finished_at FROM (
        SELECT resource, outcome, error_kind, started_at, finished_at FROM sync_latest WHERE install_row_id = ${installRowId}::uuid
        UNION ALL
        SELECT resource, outcome, error_kind, started_at, finished_at FROM sync_runs WHERE install_row_id = ${installRowId}::uuid AND outcome = 'running'
      ) AS r
      ORDER BY resource, started_at DESC`,
  ]);
  const result = {} as Record<ResourceName, ResourceFreshness>;
  for (const { name: resource } of SYNCED_RESOURCES) {
    const checkpoint = checkpoints.find((c) => c.resource === resource);
    const run = runs.find((r) => r.resource === resource);
    result[resource] = {
      resource,
      asOf: checkpoint?.lastPassEndedAt ?? null,
      passStartedAt: checkpoint?.passId ? checkpoint.passStartedAt : null,
      lastRun: run ? { outcome: run.outcome, errorKind: run.error_kind, startedAt: run.started_at, finishedAt: run.finished_at } : null,
    };
  }
  return result;
}
