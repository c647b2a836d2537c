// Retention: an uninstalled operator's synced data is deleted SYNC_RETENTION_DAYS after the uninstall
// (default 30; 0 = at once). docs/data-retention.md explains it as the partner's policy to adapt.
// An install the app lost (REINSTALL_NEEDED) is purged the same way, counted from when it was lost:
// the contract cannot tell it from an uninstall whose install.revoked never arrived (A209), and the
// copy is the API's data, read again if the operator reconnects.
//
// Run by a scheduled job. Deletes in bounded batches (BATCH_ROWS rows per statement, each its own
// short transaction), so purging an operator with a million charges never holds long locks or one
// huge transaction, and a run can stop between batches (its signal) and be resumed by the next: it
// keeps no state of its own, the data left is the state.
import "server-only";
import { db } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { shutdownSignal } from "@/lib/shutdown";
import { SYNCED_RESOURCES } from "./resources";

/** Rows per DELETE statement. */
const BATCH_ROWS = 5_000;

/**
 * The install's synced data: the checkpoints first, so that a lost install reconnected halfway through
 * its purge starts its sync afresh instead of resuming over deleted pages; then every registered
 * resource's table (./resources.ts). sync_runs stay (counts only, for the console). Table names are
 * constants of the declarations, never input, so they are interpolated as identifiers.
 */
export function purgedTables(): string[] {
  return ["sync_checkpoints", ...SYNCED_RESOURCES.map((resource) => resource.table)];
}

/** The statuses whose synced data is purged once the retention period has passed. */
const PURGED_STATUSES = ["REVOKED", "REINSTALL_NEEDED"] as const;

/**
 * When the install's synced data is deleted if nothing changes (SYNC_RETENTION_DAYS after it was
 * uninstalled or lost), or null while it is usable. The operator's page and the console show it.
 */
export function dataPurgeDate(install: { status: string; statusChangedAt: Date; revokedAt?: Date | null }): Date | null {
  const since = install.status === "REVOKED" ? (install.revokedAt ?? install.statusChangedAt) : install.status === "REINSTALL_NEEDED" ? install.statusChangedAt : null;
  return since && new Date(since.getTime() + env().SYNC_RETENTION_DAYS * 86_400_000);
}

export type PurgeSummary = {
  /** Revoked installs past the retention period that still had data. */
  installs: number;
  /** Rows deleted, per table (purgedTables). */
  deleted: Record<string, number>;
  /** The run stopped before it was done (its signal, or maxBatches): the next run goes on. */
  stoppedEarly: boolean;
};

const noneDeleted = (): Record<string, number> => Object.fromEntries(purgedTables().map((table) => [table, 0]));

/** Revoked and lost installs past the retention period that still have synced data. */
export async function findInstallsDueForPurge(now = new Date()): Promise<string[]> {
  const cutoff = new Date(now.getTime() - env().SYNC_RETENTION_DAYS * 86_400_000);
  // One EXISTS per table, each an index read of the table's (install_row_id, ...) key.
  const hasData = Prisma.join(
    purgedTables().map((table) => Prisma.sql`EXISTS (SELECT 1 FROM ${Prisma.raw(table)} d WHERE d.install_row_id = i.id)`),
    " OR ",
  );
  // REVOKED is final (lib/installs/state.ts): uninstalled, or superseded by a re-install, whose new
  // install row syncs afresh. A REINSTALL_NEEDED one may be reconnected: each batch checks (below).
  const installs = await db().$queryRaw<{ id: string }[]>`
    SELECT i.id FROM installs i
    WHERE ((i.status = 'REVOKED' AND i.revoked_at <= ${cutoff}) OR (i.status = 'REINSTALL_NEEDED' AND i.status_changed_at <= ${cutoff}))
      AND (${hasData})`;
  return installs.map((row) => row.id);
}

type PurgeOptions = { signal?: AbortSignal; batchRows?: number; maxBatches?: number };

/**
 * Deletes one install's synced data in batches; `stoppedEarly` when its signal or maxBatches ended it.
 * Nothing is deleted once the install is ACTIVE again (a reconnect after the due query): each batch
 * reads the status FOR SHARE in its own transaction, so a reconnect (transitionInstall, FOR UPDATE)
 * waits for the batch, and the sync's page writes (engine.ts, FOR SHARE) follow the reconnect.
 */
export async function purgeInstallData(
  installRowId: string,
  options: PurgeOptions = {},
): Promise<{ deleted: PurgeSummary["deleted"]; batches: number; stoppedEarly: boolean }> {
  const { signal = shutdownSignal(), batchRows = BATCH_ROWS, maxBatches = 1_000 } = options;
  const deleted = noneDeleted();
  let batches = 0;
  for (const name of purgedTables()) {
    const table = Prisma.raw(name);
    for (;;) {
      if (signal.aborted || batches >= maxBatches) return { deleted, batches, stoppedEarly: true };
      batches += 1;
      // The table's key is (install_row_id, ...), so the batch is found through the primary key's index.
      const count = await db().$transaction(async (tx) => {
        const [row] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM installs WHERE id = ${installRowId}::uuid FOR SHARE`;
        if (!row || !(PURGED_STATUSES as readonly string[]).includes(row.status)) return null;
        return tx.$executeRaw`
          DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE install_row_id = ${installRowId}::uuid LIMIT ${batchRows})`;
      });
      if (count === null) return { deleted, batches, stoppedEarly: false };
      deleted[name] = (deleted[name] ?? 0) + count;
      if (count < batchRows) break;
    }
  }
  return { deleted, batches, stoppedEarly: false };
}

/** Every revoked or lost install past the retention period, in turn (the scheduled job purges one install per job). */
export async function purgeRevokedInstallData(options: { now?: Date } & PurgeOptions = {}): Promise<PurgeSummary> {
  const { now = new Date(), maxBatches = 1_000 } = options;
  const installs = await findInstallsDueForPurge(now);
  const summary: PurgeSummary = { installs: installs.length, deleted: noneDeleted(), stoppedEarly: false };
  let batches = 0;
  for (const id of installs) {
    const one = await purgeInstallData(id, { ...options, maxBatches: maxBatches - batches });
    batches += one.batches;
    for (const [table, count] of Object.entries(one.deleted)) summary.deleted[table] = (summary.deleted[table] ?? 0) + count;
    if (one.stoppedEarly) {
      summary.stoppedEarly = true;
      break;
    }
  }
  logger.info({ ...summary, retentionDays: env().SYNC_RETENTION_DAYS }, "retention purge of revoked and lost installs' synced data finished");
  return summary;
}
