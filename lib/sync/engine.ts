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
import { logger } from "@/lib/log";
import { recordSyncLag, recordSyncRun } from "@/lib/telemetry";
import { withAccessToken } from "@/lib/oauth/access";
import { TokenCircuitOpenError } from "@/lib/oauth/circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "@/lib/oauth/errors";
import { PartnerApiError, apiCounters, currentRunDeadline, fetchListPage } from "@/lib/partner-api/client";
import { walkPages, type ListPage } from "@/lib/partner-api/paginate";
import type { SyncConfig } from "./config";
import { markUnlistedDeleted } from "./deletions";
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
  /** Records stored with text made safe (cleanRecord): counted, logged and shown to staff. */
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
 * contract §2: scopes are `<resource>` or `<resource>:<permission>`. An install granted no scope
 * naming the resource is not asked at all; one granted only a permission that turns out not to
 * allow reading gets a 403 ACCESS_FORBIDDEN, recorded the same way ("scope_not_granted").
 */
function grantsResource(scopes: readonly string[], resource: string): boolean {
  return scopes.some((scope) => scope === resource || scope.startsWith(`${resource}:`));
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

// A NUL, a high surrogate not followed by a low one, or a low one not after a high one. (String's
// isWellFormed/toWellFormed do the surrogate half, but are ES2024, past this project's TypeScript lib.)
const UNSAFE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Text PostgreSQL refuses, anywhere in a record: a NUL (not allowed in text or jsonb) or a lone UTF-16
 * surrogate (JSON.stringify writes it as `\udXXX`, which jsonb refuses). Either would fail the page's
 * one statement, and so every run, until the record changed. Each such character becomes U+FFFD (the
 * replacement character, what a UTF-8 decoder shows for bytes it cannot read), in values and keys;
 * the rest of the record is kept as sent. Returns the record itself when nothing needed cleaning.
 */
function cleanRecord(record: Record<string, unknown>): { record: Record<string, unknown>; cleaned: boolean } {
  let cleaned = false;
  const safe = (text: string) => {
    UNSAFE_TEXT.lastIndex = 0;
    if (!UNSAFE_TEXT.test(text)) return text;
    cleaned = true;
    return text.replace(UNSAFE_TEXT, "\ufffd");
  };
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return safe(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, inner]) => [safe(key), walk(inner)]));
    return value;
  };
  const result = walk(record) as Record<string, unknown>;
  return cleaned ? { record: result, cleaned } : { record, cleaned };
}

/**
 * A page's rows keyed once each (a list that repeats an id must not fail the page's one statement),
 * every record's text made safe for PostgreSQL first (cleanRecord), whatever the resource: a fork's
 * resource (npm run new:resource) goes through here too.
 */
function rowsOfPage<Row extends SyncedRow>(resource: SyncResource<Row>, page: { page: number } & ListPage<Record<string, unknown>>, config: SyncConfig): { rows: Row[]; cleaned: number } {
  const rows = new Map<string, Row>();
  let unusable = 0;
  const cleanedIds: string[] = [];
  for (const listed of page.data) {
    const { record, cleaned } = cleanRecord(listed);
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
    recordsCleaned: 0,
    requests: 0,
    durationMs: 0,
  };
  const runRow = await db().syncRun.create({ data: { installRowId, resource: resource.name, startedAt: now, outcome: "running" }, select: { id: true } });

  /** One page, through the install's token and its budget's background share. */
  const fetchPage = (page: number) => {
    if (signal.aborted) throw new StopRequestedError();
    const runEnds = currentRunDeadline();
    if (runEnds !== undefined && Date.now() >= runEnds) throw new StopRequestedError("time_limit");
    return withAccessToken(installRowId, (token, call) => fetchListPage(token, call, resource.path, { page, perPage }), { priority: "background" });
  };

  try {
    if (!grantsResource(run.grantedScopes, resource.scopeResource)) {
      Object.assign(summary, { outcome: "skipped", reason: "scope_not_granted" });
      return summary;
    }
    // What the configuration no longer keeps goes first, so a narrower configuration holds at once.
    await db().$transaction((tx) => resource.pruneOutOfScope(tx, installRowId, config));
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
    // The run's end and its resource's latest outcome (./latest.ts, what the console's "sync failing"
    // filter reads) in one transaction: both are written, or neither.
    await db().$transaction(async (tx) => {
      await tx.syncRun.update({
        where: { id: runRow.id },
        data: {
          passKind: summary.passKind,
          passId: summary.passId,
          finishedAt,
          durationMs: summary.durationMs,
          pages: summary.pages,
          recordsUpserted: summary.recordsUpserted,
          recordsDeleted: summary.recordsDeleted,
          recordsCleaned: summary.recordsCleaned,
          requests: summary.requests,
          outcome: summary.outcome,
          errorKind: summary.reason,
        },
      });
      await recordLatestOutcome(tx, { installRowId, resource: resource.name, startedAt: now, finishedAt, outcome: summary.outcome, errorKind: summary.reason });
    });
    recordSyncRun(resource.name, summary.outcome);
    const level = summary.outcome === "failed" ? "warn" : "info";
    logger[level]({ installRowId, ...summary }, `sync of ${resource.name} ${summary.outcome}`);
  }
}
