// The Overview's figures (issue 13): energy and sessions per day, revenue per currency, charge points
// by state. All of it from the install's local copy (lib/sync), never from the API: the page is
// fast, costs no request from the install's rate budget, and still works while the service is down.
//
// Every figure is an aggregate done in PostgreSQL (GROUP BY the day in the operator's time zone,
// docs/spec-gaps.md A153: "today" and each bar are the operator's days, not UTC's), with the install and the
// range in the WHERE clause, so the index on synced_charges (install_row_id, started_at) bounds the
// read to the range's rows of this one install, and at most one row per day and currency comes back:
// a 90-day range of the 20,000-charge operator returns at most ~90 rows, whatever its size.
import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { dateTimeFormat } from "@/lib/i18n/format";
import { grantsResource } from "@/lib/installs/scopes";
import { SYNCED_RESOURCES, resourceShared } from "@/lib/sync/resources";
import type { Locale } from "@/lib/i18n/locales";
import { readDashboardConfig } from "./config";
import { loadFreshness, type ResourceFreshness } from "./freshness";

// ----- the range ------------------------------------------------------------------------------------

/** The preset ranges, in days; the page links to each. */
export const RANGE_PRESETS = [7, 30, 90] as const;
export const DEFAULT_RANGE_DAYS = 30;
/** A custom range is at most this long: the daily series stays small enough to chart and to send. */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

/** A calendar day as YYYY-MM-DD that exists (2025-02-30 does not). */
const DaySchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
  });

/** The query string: `?days=7|30|90`, or `?from=YYYY-MM-DD&to=YYYY-MM-DD` (both days included). */
const RangeQuerySchema = z.object({
  days: z.coerce
    .number()
    .int()
    .refine((n) => (RANGE_PRESETS as readonly number[]).includes(n))
    .optional()
    .catch(undefined),
  from: DaySchema.optional().catch(undefined),
  to: DaySchema.optional().catch(undefined),
});

export type RangeChoice =
  | { kind: "preset"; days: number }
  | { kind: "custom"; from: string; to: string }
  /**
   * The query asked for something the page cannot show; the default is shown, and the page says why,
   * in the operator's language (messages/*.json `overview.rejected.*`, by this code).
   */
  | { kind: "default"; days: number; rejected: RangeRejection };

export type RangeRejection = "dates" | "backwards" | "tooLong" | "days";

/**
 * What the visitor asked for, from the URL. Never throws: anything unreadable becomes the default
 * range, with a sentence the page shows, because a shared link with a typo should still open.
 */
export function parseRangeQuery(query: Record<string, string | string[] | undefined>): RangeChoice {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const raw = { days: first(query.days), from: first(query.from), to: first(query.to) };
  const parsed = RangeQuerySchema.parse(raw);
  if (raw.from !== undefined || raw.to !== undefined) {
    if (!parsed.from || !parsed.to) {
      return { kind: "default", days: DEFAULT_RANGE_DAYS, rejected: "dates" };
    }
    const span = (Date.parse(parsed.to) - Date.parse(parsed.from)) / DAY_MS + 1;
    if (span < 1) return { kind: "default", days: DEFAULT_RANGE_DAYS, rejected: "backwards" };
    if (span > MAX_RANGE_DAYS) return { kind: "default", days: DEFAULT_RANGE_DAYS, rejected: "tooLong" };
    return { kind: "custom", from: parsed.from, to: parsed.to };
  }
  if (raw.days !== undefined && parsed.days === undefined) {
    return { kind: "default", days: DEFAULT_RANGE_DAYS, rejected: "days" };
  }
  return { kind: "preset", days: parsed.days ?? DEFAULT_RANGE_DAYS };
}

/**
 * The range as days in the operator's zone, `from` and `to` both included. `ends`: what a preset range ends at (the
 * latest session in the copy, or today when there is none); "custom": the dates asked for.
 */
export type OverviewRange = { from: string; to: string; days: number; ends: "latest-session" | "today" | "custom" };

/** The calendar day of an instant in a zone, YYYY-MM-DD (en-CA writes dates that way). */
const dayOf = (date: Date, timeZone = "UTC") => dateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(date);
const addDays = (day: string, n: number) => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));

/**
 * Where a preset range ends: the day (in the operator's zone) of the newest session in the local copy (docs/spec-gaps.md,
 * "what the Overview's range ends at"). Ending at today's date would show an empty page for an
 * operator whose latest sessions are older than the range (the sandbox's seed is from 2025, and a
 * sync can be days behind); the page says which day the range ends at, and why.
 */
export function resolveRange(choice: RangeChoice, latestSessionAt: Date | null, now: Date, timeZone = "UTC"): OverviewRange {
  if (choice.kind === "custom") {
    return { from: choice.from, to: choice.to, days: (Date.parse(choice.to) - Date.parse(choice.from)) / DAY_MS + 1, ends: "custom" };
  }
  const to = dayOf(latestSessionAt ?? now, timeZone);
  return { from: addDays(to, -(choice.days - 1)), to, days: choice.days, ends: latestSessionAt ? "latest-session" : "today" };
}

// ----- the figures ----------------------------------------------------------------------------------

/** One day of the range, in the operator's zone; every day is present (0 when nothing happened), so charts do not skip days. */
export type DayFigures = { day: string; sessions: number; kwh: number };

export type CurrencyTotal = { currency: string | null; decimals: number | null; amount: number; sessions: number };

export type StateCount = { state: string | null; count: number };

/**
 * Whether the Overview has session figures: `not_imported` (the operator's configuration turns them
 * off), `not_shared` (the grant lacks the charges' scope, contract §2: nothing will ever arrive),
 * `copying` (no pass over the charges has ended yet), `copied`.
 */
export type SessionsState = "not_imported" | "not_shared" | "copying" | "copied";

/** A synced resource's own headline (SyncResource.overviewHeadline), after the core ones. */
export type ExtraHeadline = {
  resource: string;
  label: string;
  labels?: Partial<Record<Locale, string>>;
  detail?: string;
  details?: Partial<Record<Locale, string>>;
  /** A count once the copy exists; null while it is being made, or when the operator did not share it. */
  value: number | null;
  state: "not_shared" | "copying" | "shown";
};

export type Overview = {
  range: OverviewRange;
  sessions: SessionsState;
  extraHeadlines: ExtraHeadline[];
  config: { currency: string | undefined; syncCharges: boolean; siteIds: readonly string[] };
  freshness: { chargePoints: ResourceFreshness; charges: ResourceFreshness };
  /** How much of the copy exists, counted only while a first pass has not ended ("copying, N so far"); charges 0 otherwise. */
  copied: { chargePoints: number; charges: number };
  latestSessionAt: Date | null;
  days: DayFigures[];
  totals: { sessions: number; kwh: number };
  /** The reporting currency first (when chosen), then the others by amount; never converted. */
  revenue: CurrencyTotal[];
  /** Charge points by state, most first; `null` is a charge point without a state. */
  states: StateCount[];
  chargePoints: { total: number; available: number; inError: number };
};

/** States that count as "in error" on the headline (public-facts.md "Records"); others are shown as they are. */
const ERROR_STATES = new Set(["error"]);

/** The newest session start in the copy: a backwards read of the (install_row_id, started_at) index. */
async function latestSessionStart(installRowId: string): Promise<Date | null> {
  const [row] = await db().$queryRaw<{ latest: Date | null }[]>`
    SELECT max(started_at) AS latest FROM synced_charges
    WHERE install_row_id = ${installRowId}::uuid AND deleted_at IS NULL`;
  return row?.latest ?? null;
}

/** What the Overview needs of the install: its row, its stored configuration and what its operator granted. */
export type OverviewInstall = { id: string; config: unknown; grantedScopes: readonly string[] };

/**
 * `timeZone`: the operator's (lib/i18n/request.ts), a valid IANA zone; the days, the range's ends and
 * "today" are that zone's.
 */
export async function loadOverview(install: OverviewInstall, choice: RangeChoice, now = new Date(), timeZone = "UTC"): Promise<Overview> {
  const installRowId = install.id;
  const config = readDashboardConfig(install.config);
  const [freshness, latestSessionAt, states] = await Promise.all([
    loadFreshness(installRowId),
    latestSessionStart(installRowId),
    // The install's charge points, by state: at most a few hundred rows, read through the primary key's prefix.
    db().$queryRaw<{ state: string | null; count: number }[]>`
      SELECT state, count(*)::int AS count FROM synced_charge_points
      WHERE install_row_id = ${installRowId}::uuid AND deleted_at IS NULL
      GROUP BY state ORDER BY count DESC, state`,
  ]);
  // How much is copied so far: only while a first pass has not ended, when the page says it. Once the
  // copy is complete the figures say it, and counting 20,000 charges on every visit would be waste.
  const sessions: SessionsState = !config.syncCharges
    ? "not_imported"
    : !resourceShared("charges", install.grantedScopes)
      ? "not_shared"
      : freshness.charges.asOf === null
        ? "copying"
        : "copied";
  const stillCopying = freshness.charge_points.asOf === null || sessions === "copying";
  const copied = stillCopying
    ? await db().$queryRaw<{ charge_points: number; charges: number }[]>`
        SELECT (SELECT count(*)::int FROM synced_charge_points WHERE install_row_id = ${installRowId}::uuid AND deleted_at IS NULL) AS charge_points,
               (SELECT count(*)::int FROM synced_charges WHERE install_row_id = ${installRowId}::uuid AND deleted_at IS NULL) AS charges`
    : [{ charge_points: states.reduce((n, s) => n + s.count, 0), charges: 0 }];
  const range = resolveRange(choice, latestSessionAt, now, timeZone);

  // One row per day (in the operator's zone) and currency: sessions, energy and revenue. `price` is what the session was
  // priced at for the driver (docs/spec-gaps.md, "revenue on the Overview"); summed as numeric in
  // SQL and sent as text, so no cent is lost before the page formats it.
  const rows =
    sessions === "copying" || sessions === "copied"
      ? await db().$queryRaw<{ day: string; currency: string | null; decimals: number | null; sessions: number; kwh: number; revenue: string | null }[]>`
        SELECT to_char((started_at AT TIME ZONE ${timeZone})::date, 'YYYY-MM-DD') AS day,
               currency,
               max(currency_decimals) AS decimals,
               count(*)::int AS sessions,
               coalesce(sum(consumed_kwh), 0)::float8 AS kwh,
               sum(price)::text AS revenue
        FROM synced_charges
        WHERE install_row_id = ${installRowId}::uuid
          AND deleted_at IS NULL
          -- The range's first midnight and the midnight after its last day, both in the operator's zone
          -- (a DST day is 23 or 25 hours long, so the ends are computed by PostgreSQL, not by adding hours).
          AND started_at >= (${range.from}::date::timestamp AT TIME ZONE ${timeZone})
          AND started_at < ((${range.to}::date + 1)::timestamp AT TIME ZONE ${timeZone})
        GROUP BY 1, currency`
      : [];

  const byDay = new Map<string, DayFigures>();
  for (let day = range.from; day <= range.to; day = addDays(day, 1)) byDay.set(day, { day, sessions: 0, kwh: 0 });
  const byCurrency = new Map<string | null, CurrencyTotal>();
  for (const row of rows) {
    const figures = byDay.get(row.day);
    if (figures) {
      figures.sessions += row.sessions;
      figures.kwh += row.kwh;
    }
    if (row.revenue === null) continue; // no session of that day and currency has a price
    const total = byCurrency.get(row.currency) ?? { currency: row.currency, decimals: row.decimals, amount: 0, sessions: 0 };
    total.amount += Number(row.revenue);
    total.sessions += row.sessions;
    total.decimals ??= row.decimals;
    byCurrency.set(row.currency, total);
  }
  const days = [...byDay.values()].map((d) => ({ ...d, kwh: Math.round(d.kwh * 1000) / 1000 }));
  const revenue = [...byCurrency.values()].sort((a, b) => {
    if (a.currency === config.currency) return -1;
    if (b.currency === config.currency) return 1;
    return b.amount - a.amount;
  });
  const total = states.reduce((n, s) => n + s.count, 0);
  return {
    range,
    sessions,
    extraHeadlines: await extraHeadlines(install, freshness, { from: range.from, to: range.to, timeZone }),
    config: { currency: config.currency, syncCharges: config.syncCharges, siteIds: config.siteIds },
    freshness: { chargePoints: freshness.charge_points, charges: freshness.charges },
    copied: { chargePoints: copied[0]?.charge_points ?? 0, charges: copied[0]?.charges ?? 0 },
    latestSessionAt,
    days,
    totals: {
      sessions: days.reduce((n, d) => n + d.sessions, 0),
      kwh: Math.round(days.reduce((n, d) => n + d.kwh, 0) * 1000) / 1000,
    },
    revenue,
    states,
    chargePoints: {
      total,
      available: states.find((s) => s.state === "available")?.count ?? 0,
      inError: states.filter((s) => s.state !== null && ERROR_STATES.has(s.state)).reduce((n, s) => n + s.count, 0),
    },
  };
}

/** The headlines the synced resources declare, in the registry's order; a read only for a copy that exists. */
async function extraHeadlines(
  install: OverviewInstall,
  freshness: Awaited<ReturnType<typeof loadFreshness>>,
  range: { from: string; to: string; timeZone: string },
): Promise<ExtraHeadline[]> {
  return Promise.all(
    SYNCED_RESOURCES.flatMap(({ name, scopeResource, overviewHeadline }) => {
      if (!overviewHeadline) return [];
      const { read, ...words } = overviewHeadline;
      const state = !grantsResource(install.grantedScopes, scopeResource) ? "not_shared" : freshness[name].asOf === null ? "copying" : "shown";
      return [(async (): Promise<ExtraHeadline> => ({ resource: name, ...words, state, value: state === "shown" ? await read(install.id, range) : null }))()];
    }),
  );
}
