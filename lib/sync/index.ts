// The sync of one install's data (issue 12): its operator's teams, charge points and charges, into
// local tables owned by the install (prisma/schema.prisma, "the sync"), so the product, its charts
// and reports read a copy that is fresh, and that survives an outage of the service.
//
//   syncInstall(installRowId, { signal, now })   one run: each resource in turn; returns what it did
//   purgeRevokedInstallData({ now })              retention (lib/sync/retention.ts)
//
// Plain functions: the job engine decides when they run (after the install's callback, on a
// schedule) and makes sure two workers never sync one install at once; they are safe to run again at
// any point, because every page is an idempotent upsert committed with its checkpoint (engine.ts).
import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { alertOnSyncOutcome } from "@/lib/alerts/incidents";
import { shutdownSignal } from "@/lib/shutdown";
import { chargePoints } from "./charge-points";
import { charges } from "./charges";
import { readSyncConfig } from "./config";
import { syncResource, type ResourceSummary } from "./engine";
import type { SyncResource, SyncedRow } from "./resource";
import { teams } from "./teams";

export { purgeRevokedInstallData } from "./retention";
export type { ResourceSummary } from "./engine";

/** In this order: the short lists first, so a run cut short still leaves them fresh. */
export const SYNCED_RESOURCES: readonly SyncResource<SyncedRow>[] = [teams, chargePoints, charges] as unknown as SyncResource<SyncedRow>[];

export type SyncSummary = {
  installRowId: string;
  /** completed: every resource completed or was skipped; stopped/failed: the first that did, and the run ended there. */
  outcome: "completed" | "stopped" | "skipped" | "failed";
  reason: string | null;
  resources: ResourceSummary[];
};

export type SyncOptions = {
  /** Checked before every request: the run stops between pages, with its checkpoint saved. Default: the process's shutdown signal. */
  signal?: AbortSignal;
  /** The run's clock: timestamps it writes and when a full pass is due. */
  now?: Date;
  /** Records per page (default SYNC_PAGE_SIZE). */
  perPage?: number;
};

export async function syncInstall(installRowId: string, options: SyncOptions = {}): Promise<SyncSummary> {
  const { signal = shutdownSignal(), now = new Date(), perPage = env().SYNC_PAGE_SIZE } = options;
  const install = await db().install.findUnique({ where: { id: installRowId }, select: { status: true, grantedScopes: true, config: true } });
  // Only an ACTIVE install is synced: a flagged one waits for its operator's re-consent (contract §7:
  // stop calling the API), a revoked or broken one for nothing the app can do.
  if (!install || install.status !== "ACTIVE") {
    const reason = install ? install.status.toLowerCase() : "unknown_install";
    logger.info({ installRowId, reason }, "sync skipped");
    return { installRowId, outcome: "skipped", reason, resources: [] };
  }
  const run = {
    installRowId,
    grantedScopes: install.grantedScopes,
    config: readSyncConfig(install.config),
    now,
    signal,
    perPage,
    fullPassEveryMs: env().SYNC_FULL_PASS_INTERVAL_HOURS * 3_600_000,
  };
  const resources: ResourceSummary[] = [];
  for (const resource of SYNCED_RESOURCES) {
    const summary = await syncResource(resource, run);
    resources.push(summary);
    // A stop or a failure concerns the install or the service, not this list: the next resource would meet it too.
    if (summary.outcome === "stopped" || summary.outcome === "failed") {
      await alertOnSyncOutcome(installRowId, summary.outcome, summary.reason);
      return { installRowId, outcome: summary.outcome, reason: summary.reason, resources };
    }
  }
  await alertOnSyncOutcome(installRowId, "completed", null);
  return { installRowId, outcome: "completed", reason: null, resources };
}
