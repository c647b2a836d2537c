// The sync of one install's data: the resources of the registry (./resources.ts), into
// local tables owned by the install (prisma/schema.prisma, "the sync"), so the product, its charts
// and reports read a copy that is fresh, and that survives an outage of the service.
//
//   syncInstall(installRowId, { signal, now })   one run: each resource in turn; returns what it did
//   purgeRevokedInstallData({ now })              retention (lib/sync/retention.ts)
//
// Plain functions: the job engine decides when they run (after the install's callback, on a
// schedule) and makes sure two workers never sync one install at once; they are safe to run again at
// any point, because every page is an idempotent upsert committed with its checkpoint (engine.ts).
//
// One failing list does not stop the others (register A104): a 5xx or timeout storm on the teams
// list ends the teams pass, and charge points and charges are still copied in the same run, each
// resource's outcome recorded in its own sync_runs row. Only what would meet every resource ends the
// run: a stop, or a failure of the install's token or the app's credentials (RUN_WIDE_FAILURES). A
// run where any resource failed is a failed run (the job retries it; three in a row alert), its
// reason naming each failed resource.
import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { alertOnSyncOutcome } from "@/lib/alerts/incidents";
import { shutdownSignal } from "@/lib/shutdown";
import { readSyncConfig } from "./config";
import { syncResource, type ResourceSummary } from "./engine";
import { SYNCED_RESOURCES } from "./resources";

export { purgeRevokedInstallData } from "./retention";
export type { ResourceSummary } from "./engine";

export type SyncSummary = {
  installRowId: string;
  /**
   * completed: every resource completed or was skipped. failed: at least one resource failed (the
   * others went on, unless the failure ended the run). stopped: the run ended at a stop (its
   * resource's checkpoint is kept) and nothing failed before it. skipped: the install is not ACTIVE.
   */
  outcome: "completed" | "stopped" | "skipped" | "failed";
  /**
   * Why, for a run that did not complete: the stop's or the run-wide failure's reason as it is
   * (e.g. "needs_reauth", "client_circuit_open"), else each failed resource with its reason
   * ("teams: unavailable, charges: timeout").
   */
  reason: string | null;
  /** The resources that failed in this run, each with its reason (sync_runs.error_kind). */
  failures: { resource: string; reason: string | null }[];
  resources: ResourceSummary[];
};

/**
 * Failures that end the whole run: they concern the install's token or the app's credentials at the
 * identity provider, not one list, so every resource after this one would meet them too (and each
 * would spend a call on the token endpoint or the API to find out). Any other failure (a 5xx, a
 * timeout, a malformed answer of one list) is that list's: its pass ends, the next resource goes on.
 */
const RUN_WIDE_FAILURES: ReadonlySet<string> = new Set(["token_refresh_unavailable", "client_circuit_open", "unauthorized"]);

/** Whether this resource's outcome ends the run (see RUN_WIDE_FAILURES and the stops in engine.ts). */
function endsTheRun(summary: ResourceSummary): boolean {
  // Every stop does: the shutdown signal, the install no longer ACTIVE, NEEDS_REAUTH (contract §7),
  // no usable token, the rate budget (contract §8: the next list would wait on the same window).
  if (summary.outcome === "stopped") return true;
  return summary.outcome === "failed" && summary.reason !== null && RUN_WIDE_FAILURES.has(summary.reason);
}

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
    return { installRowId, outcome: "skipped", reason, failures: [], resources: [] };
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
  let ended: ResourceSummary | undefined;
  for (const resource of SYNCED_RESOURCES) {
    const summary = await syncResource(resource, run);
    resources.push(summary);
    if (endsTheRun(summary)) {
      ended = summary;
      break;
    }
  }
  const failures = resources.filter((r) => r.outcome === "failed").map((r) => ({ resource: r.resource, reason: r.reason }));
  let outcome: SyncSummary["outcome"] = "completed";
  let reason: string | null = null;
  if (ended?.outcome === "failed" && failures.length === 1) {
    // Only the run-wide failure: its reason as it is (lib/alerts/incidents.ts knows client_circuit_open).
    [outcome, reason] = ["failed", ended.reason];
  } else if (failures.length > 0) {
    // A run where any resource failed is a failed run (the alerting counts it), naming each.
    [outcome, reason] = ["failed", failures.map((f) => `${f.resource}: ${f.reason ?? "unknown"}`).join(", ")];
  } else if (ended) {
    [outcome, reason] = [ended.outcome, ended.reason];
  }
  await alertOnSyncOutcome(installRowId, outcome, reason);
  return { installRowId, outcome, reason, failures, resources };
}
