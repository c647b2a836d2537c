// One install's story for the console's install page: everything that happened to it in one list,
// newest first, and where its sync and its rate budget stand now.
//
// The timeline merges sources that each keep their own record: state changes (install_events), the
// webhook deliveries that named its install_id, sync runs (sync_runs: each run where something
// happened; quiet runs as one line per resource and day, from sync_days), staff actions (the audit
// log), every refresh attempt (refresh_attempts) and a refresh whose outcome is still unknown
// (token_grants). Each source is one bounded, indexed read of its
// newest TIMELINE_LIMIT entries; a new source is one more entry in `SOURCES`.
import "server-only";
import { fetchAuditForInstall, ACTION_LABEL, CONSOLE_ACTIONS } from "@/lib/admin/audit";
import { db } from "@/lib/db/client";
import type { RefreshAttemptOutcome } from "@/lib/oauth/refresh-history";
import { SYNCED_RESOURCES, findSyncedResource } from "@/lib/sync/resources";

export const TIMELINE_LIMIT = 100;

export type TimelineKind = "state" | "webhook" | "sync" | "staff" | "tokens";
export type TimelineEntry = {
  key: string;
  at: Date;
  kind: TimelineKind;
  /** What happened, in words. */
  title: string;
  detail: string | null;
  /** How it went: for the entry's colour. */
  tone: "ok" | "warn" | "bad" | "info";
};

type Install = { id: string; installId: number | null };
type Source = (install: Install) => Promise<TimelineEntry[]>;

const STATE_WORDS: Record<string, string> = {
  ACTIVE: "Connected",
  NEEDS_REAUTH: "Re-authorization needed",
  REINSTALL_NEEDED: "Re-install needed",
  REVOKED: "Uninstalled",
};

const stateChanges: Source = async (install) => {
  const events = await db().installEvent.findMany({
    where: { installRowId: install.id },
    select: { id: true, occurredAt: true, fromStatus: true, toStatus: true, cause: true, detail: true },
    orderBy: [{ occurredAt: "desc" }, { id: "asc" }],
    take: TIMELINE_LIMIT,
  });
  return events.map((event) => ({
    key: `state:${event.id}`,
    at: event.occurredAt,
    kind: "state",
    title: `${event.fromStatus ? `${STATE_WORDS[event.fromStatus]} → ` : ""}${STATE_WORDS[event.toStatus]} (${event.cause})`,
    detail: event.detail,
    tone: event.toStatus === "ACTIVE" ? "ok" : event.toStatus === "NEEDS_REAUTH" ? "warn" : "bad",
  }));
};

const webhooks: Source = async (install) => {
  if (install.installId === null) return [];
  const deliveries = await db().webhookDelivery.findMany({
    where: { installId: install.installId },
    // Not the payload: the outcome and its detail say what staff need.
    select: { id: true, receivedAt: true, eventType: true, outcome: true, detail: true },
    orderBy: [{ receivedAt: "desc" }, { id: "desc" }],
    take: TIMELINE_LIMIT,
  });
  return deliveries.map((delivery) => ({
    key: `webhook:${delivery.id}`,
    at: delivery.receivedAt,
    kind: "webhook",
    title: `Webhook ${delivery.eventType ?? "(unreadable)"}: ${delivery.outcome}`,
    detail: delivery.detail,
    tone: delivery.outcome === "invalid" ? "bad" : "info",
  }));
};

const resourceLabel = (name: string) => findSyncedResource(name)?.label ?? name.replaceAll("_", " ");

const syncRuns: Source = async (install) => {
  const [runs, days] = await Promise.all([
    db().syncRun.findMany({
      where: { installRowId: install.id },
      select: { id: true, resource: true, passKind: true, startedAt: true, finishedAt: true, pages: true, recordsUpserted: true, recordsDeleted: true, outcome: true, errorKind: true },
      orderBy: [{ startedAt: "desc" }, { id: "desc" }],
      take: TIMELINE_LIMIT,
    }),
    // Runs that changed nothing and ended as the one before keep no row (lib/sync/history.ts): each
    // resource's day says how many there were, at the latest of them.
    db().syncDay.findMany({
      where: { installRowId: install.id, quietRuns: { gt: 0 } },
      select: { id: true, resource: true, day: true, runs: true, quietRuns: true, failures: true, recordsChanged: true, lastQuietAt: true },
      orderBy: [{ day: "desc" }, { resource: "asc" }],
      take: TIMELINE_LIMIT,
    }),
  ]);
  const quietDays: TimelineEntry[] = days.map((day) => ({
    key: `sync-day:${day.id}`,
    at: day.lastQuietAt ?? day.day,
    kind: "sync",
    title: `Sync of ${resourceLabel(day.resource)}: ${day.quietRuns} quiet run${day.quietRuns === 1 ? "" : "s"} (nothing changed)`,
    detail: `${day.day.toISOString().slice(0, 10)} (UTC): ${day.runs} run${day.runs === 1 ? "" : "s"}, ${day.failures} failed, ${day.recordsChanged} record${day.recordsChanged === 1 ? "" : "s"} changed`,
    tone: "ok",
  }));
  return [...quietDays, ...runs.map((run): TimelineEntry => ({
    key: `sync:${run.id}`,
    at: run.finishedAt ?? run.startedAt,
    kind: "sync",
    title: `Sync of ${resourceLabel(run.resource)}${run.passKind ? ` (${run.passKind} pass)` : ""}: ${run.outcome}`,
    detail:
      `${run.pages} page${run.pages === 1 ? "" : "s"}, ${run.recordsUpserted} record${run.recordsUpserted === 1 ? "" : "s"} written` +
      `${run.recordsDeleted ? `, ${run.recordsDeleted} marked deleted` : ""}${run.errorKind ? `; ${run.errorKind}` : ""}`,
    tone: run.outcome === "completed" ? "ok" : run.outcome === "failed" ? "bad" : run.outcome === "running" ? "info" : "warn",
  }))];
};

const staffActions: Source = async (install) => {
  const lines = await fetchAuditForInstall(install.id, TIMELINE_LIMIT);
  return lines.map((line) => ({
    key: `staff:${line.id}`,
    at: line.requestedAt,
    kind: "staff",
    title: `${(CONSOLE_ACTIONS as readonly string[]).includes(line.action) ? ACTION_LABEL[line.action as keyof typeof ACTION_LABEL] : line.action} by ${line.staffEmail}: ${line.outcome}`,
    detail: line.detail,
    tone: line.outcome.startsWith("refused") ? "warn" : "info",
  }));
};

/** The refresh history's words for each outcome (lib/oauth/refresh-history.ts), and its colour. */
const REFRESH_WORDS: Record<RefreshAttemptOutcome, { title: string; tone: TimelineEntry["tone"] }> = {
  refreshed: { title: "Tokens refreshed", tone: "ok" },
  not_needed: { title: "Refresh not needed (another request had refreshed)", tone: "info" },
  discarded: { title: "Refresh discarded (the grant changed meanwhile)", tone: "warn" },
  refused: { title: "Refresh refused by the identity provider", tone: "bad" },
  lost: { title: "Refresh lost: an earlier answer never arrived and its token is spent", tone: "bad" },
  unknown: { title: "Refresh outcome unknown", tone: "warn" },
  not_sent: { title: "Refresh not processed (nothing was spent)", tone: "warn" },
  settling: { title: "Refresh waited: an earlier one is being settled", tone: "warn" },
  circuit_open: { title: "Refresh stopped: the token circuit is open (invalid_client)", tone: "bad" },
  unavailable: { title: "Refresh not sent: the identity provider or the database was unavailable", tone: "warn" },
  unusable: { title: "Refresh not possible: no usable grant", tone: "warn" },
  reinstall_needed: { title: "Refresh not possible: no refresh token stored", tone: "bad" },
  error: { title: "Refresh failed (see the log)", tone: "bad" },
};

/**
 * Successes in a row (newest first) at least this many attempts long are shown as one entry: a busy
 * install refreshes hourly. The history already folds a day's routine successes into one row
 * (lib/oauth/refresh-history.ts); this joins those rows across days, and older rows that hold one.
 */
const COMPACT_SUCCESSES = 3;
const SUCCESS: ReadonlySet<string> = new Set(["refreshed", "not_needed"]);

type Attempt = {
  id: bigint;
  attemptedAt: Date;
  attempts: number;
  lastAttemptedAt: Date | null;
  durationMs: number;
  outcome: string;
  detail: string | null;
  host: string;
  pid: number;
};

const latestOf = (attempt: Attempt) => attempt.lastAttemptedAt ?? attempt.attemptedAt;

function attemptEntry(attempt: Attempt): TimelineEntry {
  const words = REFRESH_WORDS[attempt.outcome as RefreshAttemptOutcome] ?? { title: `Refresh: ${attempt.outcome}`, tone: "info" };
  const times = attempt.attempts > 1 ? `${attempt.attempts} times from ${attempt.attemptedAt.toISOString()} to ${latestOf(attempt).toISOString()}, the latest ` : "";
  return {
    key: `refresh:${attempt.id}`,
    at: latestOf(attempt),
    kind: "tokens",
    title: words.title,
    detail: `${attempt.detail ? `${attempt.detail}; ` : ""}${times}${attempt.durationMs} ms, by ${attempt.host} (pid ${attempt.pid})`,
    tone: words.tone,
  };
}

/**
 * The timeline's entries for refresh attempts (newest first): each failure on its own, and successes
 * in a row folded into one entry once they are COMPACT_SUCCESSES attempts or more.
 */
export function refreshEntries(attempts: Attempt[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  for (let i = 0; i < attempts.length; ) {
    let end = i;
    while (end < attempts.length && SUCCESS.has(attempts[end]!.outcome)) end += 1;
    const streak = attempts.slice(i, end);
    const total = streak.reduce((sum, attempt) => sum + attempt.attempts, 0);
    if (total >= COMPACT_SUCCESSES) {
      const newest = streak[0]!;
      const oldest = streak.at(-1)!;
      const refreshed = streak.filter((attempt) => attempt.outcome === "refreshed").reduce((sum, attempt) => sum + attempt.attempts, 0);
      entries.push({
        key: `refresh:${newest.id}`,
        at: latestOf(newest),
        kind: "tokens",
        title: `Tokens refreshed: ${total} attempts in a row went well`,
        detail: `${refreshed} refreshed, ${total - refreshed} not needed, from ${oldest.attemptedAt.toISOString()} to ${latestOf(newest).toISOString()}`,
        tone: "ok",
      });
      i = end;
    } else if (end > i) {
      entries.push(...streak.map(attemptEntry));
      i = end;
    } else {
      entries.push(attemptEntry(attempts[i]!));
      i += 1;
    }
  }
  return entries;
}

// The refresh history (refresh_attempts: every attempt, whatever its outcome), and what the grant
// says now: a refresh sent whose outcome is not known yet (lib/oauth/refresh.ts). The grant's last
// success is shown only when the history has none (its rows were purged, or predate it).
const tokens: Source = async (install) => {
  const [attempts, grant] = await Promise.all([
    db().refreshAttempt.findMany({
      where: { installRowId: install.id },
      select: { id: true, attemptedAt: true, attempts: true, lastAttemptedAt: true, durationMs: true, outcome: true, detail: true, host: true, pid: true },
      orderBy: [{ attemptedAt: "desc" }, { id: "desc" }],
      take: TIMELINE_LIMIT,
    }),
    db().tokenGrant.findUnique({ where: { installRowId: install.id }, select: { lastRefreshedAt: true, refreshStartedAt: true } }),
  ]);
  const entries = refreshEntries(attempts);
  if (grant?.lastRefreshedAt && attempts.length === 0) {
    entries.push({ key: "tokens:refreshed", at: grant.lastRefreshedAt, kind: "tokens", title: "Tokens refreshed (the latest refresh)", detail: null, tone: "ok" });
  }
  if (grant?.refreshStartedAt) {
    entries.push({
      key: "tokens:unknown",
      at: grant.refreshStartedAt,
      kind: "tokens",
      title: "A refresh was sent and its outcome is not known yet",
      detail: "It is settled before the refresh token is used again.",
      tone: "warn",
    });
  }
  return entries;
};

const SOURCES: Source[] = [stateChanges, webhooks, syncRuns, staffActions, tokens];

/** The install's newest TIMELINE_LIMIT entries from every source, newest first. */
export async function fetchTimeline(install: Install): Promise<TimelineEntry[]> {
  const entries = (await Promise.all(SOURCES.map((source) => source(install)))).flat();
  return entries.sort((a, b) => b.at.getTime() - a.at.getTime() || a.key.localeCompare(b.key)).slice(0, TIMELINE_LIMIT);
}

export type SyncStatus = {
  resource: string;
  /** The resource's name in words (its declaration); the stored name for one no longer registered. */
  label: string;
  /** When the latest pass (any kind) and the latest full pass ended. */
  lastPassEndedAt: Date | null;
  lastFullPassEndedAt: Date | null;
  /** A pass under way: the page it resumes at. */
  passUnderWay: { kind: string | null; startedAt: Date | null; nextPage: number } | null;
  lastRun: { outcome: string; startedAt: Date; errorKind: string | null; recordsCleaned: number } | null;
};

/**
 * Where each synced resource stands: its checkpoint and its latest run. Two reads whatever the number
 * of resources; in the registry's order (lib/sync/resources.ts), then any resource a fork has since
 * removed whose checkpoint is still stored.
 */
export async function fetchSyncStatus(installRowId: string): Promise<SyncStatus[]> {
  const [checkpoints, lastRuns] = await Promise.all([
    db().syncCheckpoint.findMany({
      where: { installRowId },
      select: { resource: true, passId: true, passKind: true, passStartedAt: true, nextPage: true, lastPassEndedAt: true, lastFullPassEndedAt: true },
    }),
    // The latest run of each resource: the latest ended one (sync_latest, with the records its kept
    // sync_runs row says were cleaned: a run that cleaned any keeps its row, lib/sync/history.ts), or a
    // run under way or stalled (its sync_runs row still "running") that started after it.
    db().$queryRaw<{ resource: string; outcome: string; started_at: Date; error_kind: string | null; records_cleaned: number }[]>`
      SELECT DISTINCT ON (resource) resource, outcome, started_at, error_kind, records_cleaned FROM (
        SELECT l.resource, l.outcome, l.started_at, l.error_kind,
          coalesce((SELECT r.records_cleaned FROM sync_runs r
                    WHERE r.install_row_id = l.install_row_id AND r.resource = l.resource AND r.started_at = l.started_at LIMIT 1), 0) AS records_cleaned
        FROM sync_latest l WHERE l.install_row_id = ${installRowId}::uuid
        UNION ALL
        SELECT resource, outcome, started_at, error_kind, records_cleaned FROM sync_runs WHERE install_row_id = ${installRowId}::uuid AND outcome = 'running'
      ) AS r WHERE started_at > now() - interval '7 days'
      ORDER BY resource, started_at DESC`,
  ]);
  const runs = new Map(lastRuns.map((run) => [run.resource, run]));
  const position = (name: string) => {
    const index = SYNCED_RESOURCES.findIndex((resource) => resource.name === name);
    return index === -1 ? SYNCED_RESOURCES.length : index;
  };
  const ordered = [...checkpoints].sort((a, b) => position(a.resource) - position(b.resource) || a.resource.localeCompare(b.resource));
  return ordered.map((checkpoint) => {
    const run = runs.get(checkpoint.resource);
    return {
      resource: checkpoint.resource,
      label: findSyncedResource(checkpoint.resource)?.label ?? checkpoint.resource.replaceAll("_", " "),
      lastPassEndedAt: checkpoint.lastPassEndedAt,
      lastFullPassEndedAt: checkpoint.lastFullPassEndedAt,
      passUnderWay: checkpoint.passId ? { kind: checkpoint.passKind, startedAt: checkpoint.passStartedAt, nextPage: checkpoint.nextPage } : null,
      lastRun: run ? { outcome: run.outcome, startedAt: run.started_at, errorKind: run.error_kind, recordsCleaned: run.records_cleaned } : null,
    };
  });
}

export type BudgetStatus = {
  quota: number;
  windowSeconds: number;
  /** Requests counted against the budget now (GCRA: how far its theoretical arrival time is ahead). */
  inUse: number;
  /** When the budget is whole again if nothing more is sent. */
  fullAt: Date;
  /** A hold in force (lib/partner-api/budget.ts): until when, and what the service said; staff may clear it. */
  hold: { until: Date; serviceSaid: string | null } | null;
};

/** The install's rate budget as lib/partner-api/budget.ts keeps it, or null before its first API call. */
export async function fetchBudgetStatus(installRowId: string): Promise<BudgetStatus | null> {
  const budget = await db().apiBudget.findUnique({ where: { installRowId }, select: { quota: true, windowSeconds: true, tat: true, heldUntil: true, holdSaid: true } });
  if (!budget) return null;
  const hold = budget.heldUntil && budget.heldUntil.getTime() > Date.now() ? { until: budget.heldUntil, serviceSaid: budget.holdSaid } : null;
  const intervalMs = (budget.windowSeconds * 1000) / budget.quota;
  const aheadMs = Math.max(0, budget.tat.getTime() - Date.now());
  return { quota: budget.quota, windowSeconds: budget.windowSeconds, inUse: Math.min(budget.quota, Math.ceil(aheadMs / intervalMs)), fullAt: new Date(Math.max(Date.now(), budget.tat.getTime())), hold };
}
