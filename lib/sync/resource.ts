// What one synced resource is: everything the app needs to know about it, declared once. One file per
// resource (charge-points.ts, charges.ts, teams.ts) fills it in: the list it walks, the scope that
// grants it and that scope's words for the operator, how a listed record maps to a row, which rows the
// install's configuration keeps, and the SQL that writes a page of rows in one statement.
//
// The registry (./resources.ts) lists the declarations; everything that lists resources derives from
// it: the sync's order (./index.ts), retention (./retention.ts), freshness (lib/dashboard/freshness.ts),
// the console's sync status (lib/admin/timeline.ts) and the scope words (lib/installs/scope-words.ts).
import "server-only";
import type { Tx } from "@/lib/db/client";
import type { Locale } from "@/lib/i18n/locales";
import type { ListPath } from "@/lib/partner-api/client";
import type { SyncConfig } from "./config";

/** The columns every synced table shares (see the models in prisma/schema.prisma). */
export type SyncedRow = { external_id: string; raw: Record<string, unknown> };

/** What one page's write stamps on every row it touches. */
export type PageStamp = { installRowId: string; passId: string; page: number; now: Date };

export interface SyncResource<Row extends SyncedRow, Name extends string = string> {
  /** Its key in sync_checkpoints.resource and sync_runs.resource: never rename it once rows carry it. */
  name: Name;
  /** What staff and operators call it, in a sentence ("charge points"). */
  label: string;
  /**
   * The table its rows live in: a model of prisma/schema.prisma with the columns of SyncedRow and the
   * bookkeeping columns of the other synced tables. A constant, never input: it is interpolated into SQL.
   */
  table: `synced_${string}`;
  path: ListPath;
  /**
   * The scope's resource name (contract §2: `<resource>` or `<resource>:<permission>`); an install
   * granted no scope of that name is not asked for the list at all.
   */
  scopeResource: string;
  /**
   * Each scope of the resource the app may be granted, in the operator's words (the dashboard shows
   * what the install may do; lib/installs/scope-words.ts). A bare resource reads as its `:read` form.
   */
  scopeWords: Readonly<Record<string, string>>;
  /** Whether passes may be incremental (lib/sync/strategy.ts); otherwise every pass is full. */
  incremental: boolean;
  /** Maps one listed record; null when it has no usable id (it cannot be keyed, so it is not kept). */
  toRow(record: Record<string, unknown>): Row | null;
  /** Whether the install's configuration keeps this row. */
  keeps(row: Row, config: SyncConfig): boolean;
  /** Whether the configuration turns the whole resource off. */
  disabledBy(config: SyncConfig): boolean;
  /** Inserts or updates a page's rows in one statement; returns how many rows it wrote. */
  upsert(tx: Tx, rows: Row[], stamp: PageStamp): Promise<number>;
  /**
   * Incremental resources only: the first record still open that started after `since`, and its
   * position among the install's rows (strategy.ts, OPEN_CHARGE_LOOKBACK_MS); null when there is none.
   */
  oldestOpen?(tx: Tx, installRowId: string, since: Date): Promise<{ id: string; position: number } | null>;
  /** Deletes the install's rows the configuration no longer keeps; returns how many. */
  pruneOutOfScope(tx: Tx, installRowId: string, config: SyncConfig): Promise<number>;
  /**
   * Optional: a figure of this resource among the Overview's headlines, after the core ones. The
   * Overview says "not shared" when the install's grant lacks the resource's scope and "—" until the
   * copy's first pass has ended; only then does it call `read`.
   */
  overviewHeadline?: OverviewHeadline;
}

export type OverviewHeadline = {
  /** Its name on the tile, in English; `labels` in the other shipped languages. */
  label: string;
  labels?: Partial<Record<Locale, string>>;
  /** The line under the figure ("in the range", "in the copy"), in English; `details` in other languages. */
  detail?: string;
  details?: Partial<Record<Locale, string>>;
  /**
   * The install's figure, shown as a count. `range`: the Overview's days (YYYY-MM-DD, both included)
   * in the operator's zone, for a figure bounded by it: `col >= (from::date::timestamp AT TIME ZONE
   * zone) AND col < ((to::date + 1)::timestamp AT TIME ZONE zone)`, as lib/dashboard/overview.ts does.
   */
  read(installRowId: string, range: { from: string; to: string; timeZone: string }): Promise<number>;
};

/**
 * Declares a resource, keeping its name's literal type (so `ResourceName` in ./resources.ts is the
 * union of the registered names, and a page asking for an unknown one does not compile).
 */
export function defineSyncResource<Row extends SyncedRow, const Name extends string>(resource: SyncResource<Row, Name>): SyncResource<Row, Name> {
  return resource;
}

/** A string from a record field, or null for anything else. */
export function text(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return null;
}

/** A finite number, or null. */
export function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** A whole number that fits an INTEGER column, or null (a bigger one would fail the page's statement). */
export function integer(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && Math.abs(value) <= 2_147_483_647 ? value : null;
}

/** A boolean, or null. */
export function bool(value: unknown): boolean | null {
  return typeof value === "boolean" ? value : null;
}

/** An ISO timestamp PostgreSQL will read, or null (a malformed date must not fail the page's statement). */
export function timestamp(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** A nested object field, or undefined. */
export function objectAt(value: unknown, key: string): Record<string, unknown> | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const inner = (value as Record<string, unknown>)[key];
  return inner !== null && typeof inner === "object" && !Array.isArray(inner) ? (inner as Record<string, unknown>) : undefined;
}

/** The record's id as the key: int64 ids kept as text, as lib/partner-api/schemas.ts reads them. */
export function recordId(record: Record<string, unknown>): string | null {
  const id = text(record.id);
  return id !== null && id.length > 0 && id.length <= 100 ? id : null;
}
