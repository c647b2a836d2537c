// One resource's sync for one install: a pass over the list, page by page, each page written in one
// transaction together with the checkpoint that says which page comes next.
//
//   checkpoint (pass in progress? next page) ──▶ GET page n ──▶ BEGIN; upsert page n's records;
//   checkpoint.next_page = n + 1; COMMIT ──▶ GET page n + 1 ... ──▶ end of the list: BEGIN; (full pass)
//   mark the records it proved gone; close the pass; COMMIT
//
// So whatever stops a run (the process killed, a 429 the budget could not wait out, NEEDS_REAUTH,
// an uninstall, the shutdown signal), every page before the stop is stored with its checkpoint and
// no page after it is: the next run resumes at the next page, and never reads a finished page again.
// Every request goes through the install's rate budget with priority "background"
// (lib/partner-api/budget.ts: the sync never takes the reserve kept for pages operators wait for).
import "server-only";
import { randomUUID } from "node:crypto";
import { db, type Tx } from "@/lib/db/client";
import { storableJson } from "@/lib/db/storable-text";
import { Prisma } from "@/lib/db/generated/client";
import { logger } from "@/lib/log";
import { recordSyncLag, recordSyncRun } from "@/lib/telemetry";
import { grantsResource } from "@/lib/installs/scopes";
import { withAccessToken } from "@/lib/oauth/access";
import { TokenCircuitOpenError } from "@/lib/oauth/circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "@/lib/oauth/errors";
import { PartnerApiError, apiCounters, currentRunDeadline, fetchListPage } from "@/lib/partner-api/client";
import { walkPages, type ListPage } from "@/lib/partner-api/paginate";
import type { SyncConfig } from "./config";
import { markUnlistedDeleted } from "./deletions";
import { recordRunHistory, startRunRow, writeRunningRow } from "./history";
import { recordLatestOutcome } from "./latest";
import { recordId, type SyncResource, type SyncedRow } from "./resource";
import { OPEN_CHARGE_LOOKBACK_MS, choosePassKind, findIncrementalStart, incrementalTarget, type PassKind } from "./strategy";

/**
 * completed: the pass reached the end of the list; stopped: it stopped for a reason that is not a
 * fault (the checkpoint is kept for the next run); skipped: nothing to do (scope, configuration);
 * failed: the service or the token endpoint did not answer usefully (the checkpoint is kept too).
 */
export type ResourceOutcome = "completed" | "stopped" | "skipped" | "failed";

export type ResourceSummary = {
  resource: SyncResource<SyncedRow>["name"];
  outcome: ResourceOutcome;
  /** Why it stopped, failed or was skipped (sync_runs.error_kind). */
  reason: string | null;
  passKind: PassKind | null;
  passId: string | null;
  /** The page this run resumed a pass at; null when it started a pass. */
  resumedAtPage: number | null;
  pages: number;
  recordsUpserted: number;
  recordsDeleted: number;
  /** Records it inserted, changed, un-deleted or removed as out of scope: none makes a quiet run (./history.ts). */
  recordsChanged: number;
  /** Records stored with text made safe (lib/db/storable-text.ts): counted, logged and shown to staff. */
  recordsCleaned: number;
  /** Requests this process sent for the install during the run, retries included. */
  requests: number;
  durationMs: number;
};

export type ResourceRun = {
  installRowId: string;
  grantedScopes: readonly string[];
  config: SyncConfig;
  now: Date;
  signal: AbortSignal;
  perPage: number;
  fullPassEveryMs: number;
};

/**
 * The caller asked the run to stop (its signal), or the run's time limit passed (a cron route's:
 * lib/partner-api/client.ts withRunDeadline); checked before every request.
 */
class StopRequestedError extends Error {
  constructor(readonly reason: "stop_requested" | "time_limit" = "stop_requested") {
    super(`sync stopped: ${reason}`);
    this.name = "StopRequestedError";
  }
}

/** The install left ACTIVE while the run was under way (uninstalled, flagged, chain gone). */
class InstallNotActiveError extends Error {
  constructor(readonly status: string) {
    super(`install is ${status}`);
    this.name = "InstallNotActiveError";
  }
}


/**
 * Each page is written only while the install is ACTIVE, and the check holds a share lock on the
 * install's row until the page commits: an uninstall (lib/installs/state.ts takes the row FOR
 * UPDATE) waits for a page under way, and a page after it finds REVOKED and writes nothing. So no
 * record of an uninstalled operator is written after the uninstall, and retention deletes all.
 */
async function assertInstallActive(tx: Tx, installRowId: string): Promise<void> {
  const [row] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM installs WHERE id = ${installRowId}::uuid FOR SHARE`;
  if (!row || row.status !== "ACTIVE") throw new InstallNotActiveError(row?.status ?? "missing");
}

function classify(error: unknown): { outcome: ResourceOutcome; reason: string } | null {
  if (error instanceof StopRequestedError) return { outcome: "stopped", reason: error.reason };
  if (error instanceof InstallNotActiveError) return { outcome: "stopped", reason: error.status.toLowerCase() };
  // revoked, needs_reauth, reinstall_needed, no_grant: only the operator can change these.
  if (error instanceof NoUsableTokenError) return { outcome: "stopped", reason: error.reason };
  if (error instanceof PartnerApiError) {
    switch (error.kind) {
      // contract §7: lib/oauth/access.ts has flagged the install; the app stops calling the API for it.
      case "needs_reauth":
        return { outcome: "stopped", reason: "needs_reauth" };
      // contract §8: the budget's hold and retries could not wait it out within the call's deadline.
      case "rate_limited":
        return { outcome: "stopped", reason: "rate_limited" };
      case "forbidden":
        return { outcome: "skipped", reason: "scope_not_granted" };
      default:
        return { outcome: "failed", reason: error.kind };
    }
  }
  if (error instanceof TokenRefreshUnavailableError) return { outcome: "failed", reason: "token_refresh_unavailable" };
  if (error instanceof TokenCircuitOpenError) return { outcome: "failed", reason: "client_circuit_open" };
  return null;
}

/**
 * A page's rows keyed once each (a list that repeats an id must not fail the page's one statement),
 * every record's text made safe for PostgreSQL first (lib/db/storable-text.ts), whatever the resource: a fork's
 * resource (npm run new:resource) goes through here too.
 */
function rowsOfPage<Row extends SyncedRow>(resource: SyncResource<Row>, page: { page: number } & ListPage<Record<string, unknown>>, config: SyncConfig): { rows: Row[]; cleaned: number } {
  const rows = new Map<string, Row>();
  let unusable = 0;
  const cleanedIds: string[] = [];
  for (const listed of page.data) {
    const { value: record, cleaned } = storableJson(listed);
    const row = resource.toRow(record);
    if (row === null) unusable += 1;
    else {
      if (cleaned) cleanedIds.push(row.external_id);
      if (resource.keeps(row, config)) rows.set(row.external_id, row);
    }
  }
  if (unusable > 0) logger.warn({ resource: resource.name, unusable }, "listed records without a usable id were not kept");
  if (cleanedIds.length > 0) {
    logger.warn({ resource: resource.name, page: page.page, recordIds: cleanedIds.slice(0, 20) }, "listed records held a NUL or a lone surrogate; stored with U+FFFD in its place");
  }
  return { rows: [...rows.values()], cleaned: cleanedIds.length };
}

/**
 * How many of a page's rows the upsert just inserted or changed: the upsert moves updated_at to the
 * run's `now` only then (lib/sync/<resource>.ts). Read here, through the rows' unique index, so the
 * resources' declarations (and a fork's) keep returning what they wrote.
 */
async function countChanged(tx: Tx, resource: SyncResource<SyncedRow>, installRowId: string, rows: SyncedRow[], now: Date): Promise<number> {
  const [row] = await tx.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS n FROM ${Prisma.raw(resource.table)}
    WHERE install_row_id = ${installRowId}::uuid AND external_id = ANY(${rows.map((r) => r.external_id)}::text[]) AND updated_at = ${now}`;
  return row?.n ?? 0;
}

export async function syncResource<Row extends SyncedRow>(resource: SyncResource<Row>, run: ResourceRun): Promise<ResourceSummary> {
  const { installRowId, config, now, signal, perPage } = run;
  const startedAt = performance.now();
  const requestsBefore = apiCounters(installRowId).requests;
  const summary: ResourceSummary = {
    resource: resource.name,
    outcome: "completed",
    reason: null,
    passKind: null,
    passId: null,
    resumedAtPage: null,
    pages: 0,
    recordsUpserted: 0,
    recordsDeleted: 0,
    recordsChanged: 0,
    recordsCleaned: 0,
    requests: 0,
    durationMs: 0,
  };
  const runRow = await startRunRow(db(), installRowId, resource.name, now);

  /** One page, through the install's token and its budget's background share. */
  const fetchPage = (page: number) => {
    if (signal.aborted) throw new StopRequestedError();
    const runEnds = currentRunDeadline();
    if (runEnds !== undefined && Date.now() >= runEnds) throw new StopRequestedError("time_limit");
    return withAccessToken(installRowId, (token, call) => fetchListPage(token, call, resource.path, { page, perPage }), { priority: "background" });
  };

  try {
    // An install granted no scope naming the resource is not asked at all; one granted only a
    // permission that does not allow reading gets a 403 ACCESS_FORBIDDEN, recorded the same way.
    if (!grantsResource(run.grantedScopes, resource.scopeResource)) {
      Object.assign(summary, { outcome: "skipped", reason: "scope_not_granted" });
      return summary;
    }
    // What the configuration no longer keeps goes first, so a narrower configuration holds at once.
    summary.recordsChanged += await db().$transaction((tx) => resource.pruneOutOfScope(tx, installRowId, config));
    if (resource.disabledBy(config)) {
      Object.assign(summary, { outcome: "skipped", reason: "disabled_by_config" });
      return summary;
    }

    let checkpoint = await db().syncCheckpoint.findUnique({ where: { installRowId_resource: { installRowId, resource: resource.name } } });
    // A pass in progress resumes, unless the page size changed: its page numbers would mean other records.
    if (checkpoint?.passId && checkpoint.passKind && checkpoint.perPage === perPage) {
      summary.resumedAtPage = checkpoint.nextPage;
    } else {
      const kind = choosePassKind({ incremental: resource.incremental, checkpoint, now, fullPassEveryMs: run.fullPassEveryMs });
      let startPage = 0;
      if (kind === "incremental") {
        const highWater = { id: checkpoint!.highWaterId!, position: checkpoint!.highWaterPosition! };
        const oldestOpen = (await resource.oldestOpen?.(db(), installRowId, new Date(now.getTime() - OPEN_CHARGE_LOOKBACK_MS))) ?? null;
        const probe = async (page: number) => recordId((await fetchPage(page)).data[0] ?? {});
        startPage = await findIncrementalStart(probe, incrementalTarget(highWater, oldestOpen), perPage);
      }
      const pass = { passId: randomUUID(), passKind: kind, passStartedAt: now, nextPage: startPage, perPage, updatedAt: now };
      checkpoint = await db().syncCheckpoint.upsert({
        where: { installRowId_resource: { installRowId, resource: resource.name } },
        create: { installRowId, resource: resource.name, ...pass },
        update: pass,
      });
    }
    const passId = checkpoint.passId!;
    const passKind = checkpoint.passKind as PassKind;
    Object.assign(summary, { passId, passKind });

    let endPage: number | null = null;
    let pagesRead = 0;
    for await (const page of walkPages(fetchPage, { startPage: checkpoint.nextPage })) {
      const { rows, cleaned } = rowsOfPage(resource, page, config);
      // The list's last record, kept or not, is where the next incremental pass looks (strategy.ts).
      const lastId = recordId(page.data.at(-1) ?? {});
      const written = await db().$transaction(async (tx) => {
        await assertInstallActive(tx, installRowId);
        const count = rows.length > 0 ? await resource.upsert(tx, rows, { installRowId, passId, page: page.page, now }) : 0;
        const changed = count > 0 ? await countChanged(tx, resource, installRowId, rows, now) : 0;
        if (changed > 0) await writeRunningRow(tx, runRow);
        summary.recordsChanged += changed;
        await tx.syncCheckpoint.update({
          where: { installRowId_resource: { installRowId, resource: resource.name } },
          data: {
            nextPage: page.page + 1,
            ...(lastId !== null ? { highWaterId: lastId, highWaterPosition: page.page * perPage + page.data.length - 1 } : {}),
            updatedAt: now,
          },
        });
        return count;
      });
      pagesRead += 1;
      summary.pages += 1;
      summary.recordsUpserted += written;
      summary.recordsCleaned += cleaned;
      endPage = page.page + 1 >= page.meta.totalPageCount ? page.page : null;
    }

    // The end of the list: close the pass; a full one marks what it proved is gone (deletions.ts).
    const listWasEmpty = passKind === "full" && pagesRead === 0 && checkpoint.nextPage === 0;
    summary.recordsDeleted = await db().$transaction(async (tx) => {
      await assertInstallActive(tx, installRowId);
      const deleted = passKind === "full" ? await markUnlistedDeleted(tx, resource, { installRowId, passId, endPage, listWasEmpty, now }) : 0;
      await tx.syncCheckpoint.update({
        where: { installRowId_resource: { installRowId, resource: resource.name } },
        data: { passId: null, passKind: null, passStartedAt: null, nextPage: 0, lastPassEndedAt: now, ...(passKind === "full" ? { lastFullPassEndedAt: now } : {}), updatedAt: now },
      });
      return deleted;
    });
    // Sync lag (lib/telemetry): how old the local copy had grown (the previous pass's end to this run) before this pass renewed it.
    if (checkpoint.lastPassEndedAt) recordSyncLag(resource.name, (now.getTime() - checkpoint.lastPassEndedAt.getTime()) / 1000);
    return summary;
  } catch (error) {
    const classified = classify(error);
    Object.assign(summary, classified ?? { outcome: "failed", reason: "internal" });
    if (!classified) throw error;
    if (summary.reason === "no_grant" || summary.reason === "unauthorized") {
      // An uninstall deletes the grant (lib/installs/state.ts): say what happened, not what was missing.
      const install = await db().install.findUnique({ where: { id: installRowId }, select: { status: true } });
      if (install && install.status !== "ACTIVE") summary.reason = install.status.toLowerCase();
    }
    return summary;
  } finally {
    summary.requests = apiCounters(installRowId).requests - requestsBefore;
    summary.durationMs = Math.round(performance.now() - startedAt);
    const finishedAt = new Date(now.getTime() + summary.durationMs);
    // The run's end in the history (./history.ts: its row, or only its day's counts when quiet) and its
    // resource's latest outcome (./latest.ts, what the console's "sync failing" filter reads) in one
    // transaction: both are written, or neither.
    await db().$transaction(async (tx) => {
      await recordRunHistory(tx, { ...summary, row: runRow, installRowId, startedAt: now, finishedAt, errorKind: summary.reason });
      await recordLatestOutcome(tx, { installRowId, resource: resource.name, startedAt: now, finishedAt, outcome: summary.outcome, errorKind: summary.reason });
    });
    recordSyncRun(resource.name, summary.outcome);
    const level = summary.outcome === "failed" ? "warn" : "info";
    logger[level]({ installRowId, ...summary }, `sync of ${resource.name} ${summary.outcome}`);
  }
}
