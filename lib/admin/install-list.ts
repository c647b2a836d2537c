// The staff console's install list (/admin) at any number of installs (issue 14): one page at a
// time, a search box, filters by state, token health and sync health, a choice of sorts, and the
// counts per state. Everything is answered by the database; the page renders in two queries
// whatever the number of installs (three when the page asked for is past the last one):
//
//   1. the page: the installs of this page (a bounded LIMIT/OFFSET), each with its token grant's
//      timing and its sync health, computed for those rows only (no query per row);
//   2. the counts: per state, all installs and those that match the search and filters (the
//      latter through the filter's index).
//
// Token health is derived from token_grants at read time. Sync health is derived from the install's
// sync summary (installs.synced_at, synced_once, sync_failing), which lib/sync/latest.ts recomputes from
// sync_checkpoints and sync_latest in the transaction that ends each run, with the definitions below
// (SYNC_HEALTHS): so each sync filter and the "last sync" sort are a condition or an order on installs
// that an index serves (installs_sync_order_idx, installs_sync_failing_idx), and a page reads its own
// rows, not every install's checkpoints (that read 30,000 checkpoints for a page at 10,000 installs:
// 71-86 ms, issue 34). None of it is a history, so nothing here reads sync_runs.
//
// Pagination is by offset, not keyset: staff jump to a page number and sort by computed columns
// (the token's expiry), which a keyset cannot follow. The cost of an offset is reading the rows it skips
// from an index: measured at 10,000 installs, the last page of the newest-first list takes 2.7 ms
// in the database against 1.2 ms for the first (npm run bench -- console). Every sort ends with the
// row id, so the order is total and no install appears on two pages, or on none, while nothing is
// written.
import "server-only";
import { z } from "zod";
import { db, type Tx } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import type { InstallStatus } from "@/lib/db/generated/enums";
import { env } from "@/lib/env";
import { KEEP_ALIVE_HORIZON_MS } from "@/lib/jobs/keep-alive";
import { INSTALL_STATUSES } from "./queries";

export const PER_PAGE_CHOICES = [25, 50, 100] as const;

/**
 * Token health, worst first: an install is in the first that applies.
 * - no_grant: no token_grants row (uninstalled, or the chain is gone: lib/installs/state.ts deletes it).
 * - refresh_unknown: refresh_started_at is set: a refresh token was sent and its outcome never
 *   recorded (lib/oauth/refresh.ts); nothing re-sends it blindly, so staff must look.
 * - refresh_expiring: the refresh token expires within the keep-alive horizon (7 days,
 *   lib/jobs/keep-alive.ts) or has expired; keep-alive should already have renewed it.
 * - access_expired: the access token has expired (normal between uses: the next call refreshes it).
 * - healthy: none of these.
 */
export const TOKEN_HEALTHS = ["healthy", "access_expired", "refresh_expiring", "refresh_unknown", "no_grant"] as const;
export type TokenHealth = (typeof TOKEN_HEALTHS)[number];

/**
 * Sync health, first that applies (lib/sync writes the tables these read):
 * - paused: the install is not ACTIVE, so lib/sync does not sync it (contract §7: a flagged install
 *   is not called; a revoked one cannot be).
 * - failing (installs.sync_failing): the install's latest finished sync failed: of each resource's
 *   latest finished run (sync_latest), one of those that share the latest started_at has outcome
 *   "failed" (one sync's runs share started_at, and a resource that failed is recorded even when the
 *   others went on: lib/sync/index.ts). Runs still "running" do not count (nor one whose process died
 *   before it could record an outcome): only a run's end writes sync_latest.
 * - never (not installs.synced_once): no resource's pass has ever ended (no
 *   sync_checkpoints.last_pass_ended_at).
 * - lagging: some resource's copy is older than SYNC_LAG_INTERVALS × SYNC_INTERVAL_MINUTES, or has
 *   not finished its first pass while others have (installs.synced_at, the oldest resource's last
 *   pass end, is older, or null).
 * - up_to_date: every resource's copy ended a pass within that time.
 * A resource never synced because it is not granted or is disabled by the configuration has no
 * checkpoint, and does not count. All as of the install's latest run end (lib/sync/latest.ts); a purge
 * of an uninstalled install's data (lib/sync/retention.ts) leaves its summary as it was.
 */
export const SYNC_HEALTHS = ["up_to_date", "lagging", "failing", "never", "paused"] as const;
export type SyncHealth = (typeof SYNC_HEALTHS)[number];

/** Lagging: no pass ended within this many sync intervals (one missed interval is not yet a problem). */
export const SYNC_LAG_INTERVALS = 3;

/** The sorts staff choose from; each has one direction, the one they need (soonest expiry first, stalest copy first). */
export const SORTS = ["newest", "oldest", "operator", "changed", "expiry", "synced"] as const;
export type InstallSort = (typeof SORTS)[number];

/** Search text: control characters out (PostgreSQL refuses a NUL in text), trimmed, at most 100 characters. */
const SearchSchema = z
  .string()
  .transform((s) => s.replace(/[\u0000-\u001f\u007f]/g, " ").trim().slice(0, 100))
  .catch("");

/**
 * The list's query string. Anything malformed falls back to its default, never an error page: an
 * old bookmark or a stranger's link still shows the list.
 */
export const InstallListQuerySchema = z.object({
  q: SearchSchema,
  state: z.enum(INSTALL_STATUSES).optional().catch(undefined),
  token: z.enum(TOKEN_HEALTHS).optional().catch(undefined),
  sync: z.enum(SYNC_HEALTHS).optional().catch(undefined),
  sort: z.enum(SORTS).catch("newest"),
  page: z.coerce.number().int().min(0).max(1_000_000).catch(0),
  perPage: z.coerce
    .number()
    .int()
    .refine((n) => (PER_PAGE_CHOICES as readonly number[]).includes(n))
    .catch(25),
});
export type InstallListQuery = z.infer<typeof InstallListQuerySchema>;

export const DEFAULT_QUERY: InstallListQuery = InstallListQuerySchema.parse({});

/** A query string as Next.js hands it over: a repeated key arrives as an array; the first one counts. */
export function parseInstallListQuery(params: Record<string, string | string[] | undefined>): InstallListQuery {
  return InstallListQuerySchema.parse(Object.fromEntries(Object.entries(params).map(([key, value]) => [key, Array.isArray(value) ? value[0] : value])));
}

export type InstallListItem = {
  id: string;
  installId: number | null;
  operatorId: string;
  operatorName: string | null;
  slug: string | null;
  status: InstallStatus;
  statusChangedAt: Date;
  createdAt: Date;
  tokenHealth: TokenHealth;
  accessTokenExpiresAt: Date | null;
  refreshTokenExpiresAt: Date | null;
  /** Not null: a refresh was sent and its outcome never recorded (lib/oauth/refresh.ts). */
  refreshStartedAt: Date | null;
  syncHealth: SyncHealth;
  /** The whole copy is complete as of then (the oldest resource's last ended pass); null if some resource has none. */
  syncedAt: Date | null;
  /** The latest finished sync's start, whatever its outcome. */
  lastSyncRunAt: Date | null;
};

export type InstallList = {
  items: InstallListItem[];
  /** The page shown (the last one when the one asked for is past the end). */
  page: number;
  perPage: number;
  /** Installs that match the search and filters. */
  matching: number;
  /** How many installs are in each state: all of them, and those that match. */
  counts: Record<InstallStatus, { all: number; matching: number }>;
  total: number;
  /** Whether a search or filter narrows the list. */
  filtered: boolean;
  /** When this was read: the health words and the page's times are relative to it. */
  asOf: Date;
};

/** What the search text is: an exact id is looked up by an index; anything else is also a name fragment. */
type SearchTerm = { kind: "none" } | { kind: "uuid"; value: string } | { kind: "number"; value: string } | { kind: "text"; value: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT4_MAX = 2_147_483_647;

export function classifySearch(q: string): SearchTerm {
  if (q === "") return { kind: "none" };
  if (UUID.test(q)) return { kind: "uuid", value: q.toLowerCase() };
  if (/^\d{1,19}$/.test(q)) return { kind: "number", value: q.replace(/^0+(?=\d)/, "") };
  return { kind: "text", value: q };
}

/** LIKE's own wildcards in the search text are matched literally. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The search's condition on `i` (installs):
 * - a UUID: the install's row id (primary key);
 * - digits: the service's install id (unique index) or the operator id (index): ids, never fragments,
 *   so "42" finds install 42 and operator 42, not every name with a 42 in it;
 * - anything else: the operator id or slug exactly (indexes), or a fragment of the operator's name or
 *   slug, case-insensitively (ILIKE: case is folded as the database's locale folds it, e.g. every
 *   letter under en_US.UTF-8, ASCII letters only under the C locale). The fragment is a scan of the
 *   installs table: at 10,000 installs it takes a few milliseconds (bench section "console"), which
 *   does not justify a trigram index.
 */
function searchCondition(term: SearchTerm): Prisma.Sql {
  switch (term.kind) {
    case "none":
      return Prisma.sql`TRUE`;
    case "uuid":
      return Prisma.sql`i.id = ${term.value}::uuid`;
    case "number": {
      const asInstallId = Number(term.value) <= INT4_MAX ? Prisma.sql`i.install_id = ${Number(term.value)}::int OR ` : Prisma.empty;
      return Prisma.sql`(${asInstallId}i.operator_id = ${term.value})`;
    }
    case "text": {
      const pattern = likePattern(term.value);
      return Prisma.sql`(i.operator_id = ${term.value} OR i.slug = ${term.value} OR i.operator_name ILIKE ${pattern} OR i.slug ILIKE ${pattern})`;
    }
  }
}

type Clock = { now: Date; refreshSoon: Date; syncCutoff: Date };

function clockAt(now: Date): Clock {
  return {
    now,
    refreshSoon: new Date(now.getTime() + KEEP_ALIVE_HORIZON_MS),
    syncCutoff: new Date(now.getTime() - SYNC_LAG_INTERVALS * env().SYNC_INTERVAL_MINUTES * 60_000),
  };
}

/** Token health of `i` with its grant `g` (definitions at TOKEN_HEALTHS). */
function tokenHealthSql(clock: Clock): Prisma.Sql {
  return Prisma.sql`CASE
    WHEN g.id IS NULL THEN 'no_grant'
    WHEN g.refresh_started_at IS NOT NULL THEN 'refresh_unknown'
    WHEN g.refresh_token_expires_at <= ${clock.refreshSoon} THEN 'refresh_expiring'
    WHEN g.access_token_expires_at <= ${clock.now} THEN 'access_expired'
    ELSE 'healthy' END`;
}

/**
 * Each sync health as a condition on `i` alone (definitions at SYNC_HEALTHS), written so an index
 * serves it: "failing" the partial index of failing installs, "lagging" and "up_to_date" a range of
 * installs_sync_order_idx (synced_once, synced_at NULLS FIRST, id).
 */
function syncHealthConditions(clock: Clock): Record<SyncHealth, Prisma.Sql> {
  const synced = Prisma.sql`i.status = 'ACTIVE' AND NOT i.sync_failing AND i.synced_once`;
  return {
    paused: Prisma.sql`i.status <> 'ACTIVE'`,
    failing: Prisma.sql`(i.status = 'ACTIVE' AND i.sync_failing)`,
    never: Prisma.sql`(i.status = 'ACTIVE' AND NOT i.sync_failing AND NOT i.synced_once)`,
    lagging: Prisma.sql`(${synced} AND (i.synced_at IS NULL OR i.synced_at < ${clock.syncCutoff}))`,
    up_to_date: Prisma.sql`(${synced} AND i.synced_at >= ${clock.syncCutoff})`,
  };
}

/** Sync health of `i` (definitions at SYNC_HEALTHS), for a page's rows. */
function syncHealthSql(clock: Clock): Prisma.Sql {
  return Prisma.sql`CASE
    WHEN i.status <> 'ACTIVE' THEN 'paused'
    WHEN i.sync_failing THEN 'failing'
    WHEN NOT i.synced_once THEN 'never'
    WHEN i.synced_at IS NULL OR i.synced_at < ${clock.syncCutoff} THEN 'lagging'
    ELSE 'up_to_date' END`;
}

// The latest sync's start (the page's "last sync" column), for the rows a page shows only: a lateral
// subquery over the install's few rows of sync_latest (keyed by (install_row_id, resource)).
const LATEST_SYNC_JOIN = Prisma.sql`
  LEFT JOIN LATERAL (
    SELECT max(l.started_at) AS started_at FROM sync_latest l WHERE l.install_row_id = i.id
  ) ls ON TRUE`;
const GRANT_JOIN = Prisma.sql`LEFT JOIN token_grants g ON g.install_row_id = i.id`;

/**
 * Each sort's order, before the row id. Its columns are those of an index where it matters
 * (installs(created_at, id), installs(status_changed_at, id), installs_sync_order_idx); the row id
 * breaks ties, in the same direction, so an index read backwards serves a descending sort.
 */
const SORT_SQL: Record<InstallSort, { order: Prisma.Sql; dir: Prisma.Sql; needs: "none" | "grant" }> = {
  newest: { order: Prisma.sql`i.created_at DESC`, dir: Prisma.sql`DESC`, needs: "none" },
  oldest: { order: Prisma.sql`i.created_at ASC`, dir: Prisma.sql`ASC`, needs: "none" },
  operator: { order: Prisma.sql`lower(coalesce(i.operator_name, i.operator_id)) ASC`, dir: Prisma.sql`ASC`, needs: "none" },
  changed: { order: Prisma.sql`i.status_changed_at DESC`, dir: Prisma.sql`DESC`, needs: "none" },
  // The refresh token's expiry: when the install's token chain dies unless it is renewed (contract §3).
  expiry: { order: Prisma.sql`g.refresh_token_expires_at ASC NULLS LAST`, dir: Prisma.sql`ASC`, needs: "grant" },
  // Stalest copy first: never synced first of all, then the incomplete copies, then the oldest complete one.
  synced: { order: Prisma.sql`i.synced_once ASC, i.synced_at ASC NULLS FIRST`, dir: Prisma.sql`ASC`, needs: "none" },
};

type PageRow = {
  id: string;
  install_id: number | null;
  operator_id: string;
  operator_name: string | null;
  slug: string | null;
  status: InstallStatus;
  status_changed_at: Date;
  created_at: Date;
  token_health: TokenHealth;
  access_token_expires_at: Date | null;
  refresh_token_expires_at: Date | null;
  refresh_started_at: Date | null;
  sync_health: SyncHealth;
  synced_at: Date | null;
  last_sync_run_at: Date | null;
};

type CountRow = { status: InstallStatus; all: number; matching: number };

/**
 * One page of the install list, and the counts. `client`: the database (a test passes its own to
 * count the queries).
 */
export async function fetchInstallList(query: InstallListQuery, { client = db(), now = new Date() }: { client?: Tx; now?: Date } = {}): Promise<InstallList> {
  const clock = clockAt(now);
  const term = classifySearch(query.q);
  const sort = SORT_SQL[query.sort];
  const tokenHealth = tokenHealthSql(clock);
  const syncHealth = syncHealthSql(clock);

  // The WHERE clause, and the joins it needs (only those: the counts read every install).
  const conditions: Prisma.Sql[] = [searchCondition(term)];
  if (query.state) conditions.push(Prisma.sql`i.status = ${query.state}::install_status`);
  if (query.token) conditions.push(Prisma.sql`(${tokenHealth}) = ${query.token}`);
  if (query.sync) conditions.push(syncHealthConditions(clock)[query.sync]);
  const where = Prisma.join(conditions, " AND ");
  const countJoins = query.token ? GRANT_JOIN : Prisma.empty;
  // The page's ids are chosen first with only the join the filter and the sort need; the health
  // of those rows only is computed after, so a deep page does not compute it for the rows it skips.
  const pageJoins = query.token || sort.needs === "grant" ? GRANT_JOIN : Prisma.empty;

  const readPage = (page: number) =>
    client.$queryRaw<PageRow[]>`
      WITH page AS MATERIALIZED (
        SELECT i.id
        FROM installs i ${pageJoins}
        WHERE ${where}
        ORDER BY ${sort.order}, i.id ${sort.dir}
        LIMIT ${query.perPage} OFFSET ${page * query.perPage}
      )
      SELECT i.id, i.install_id, i.operator_id, i.operator_name, i.slug, i.status, i.status_changed_at, i.created_at,
             ${tokenHealth} AS token_health,
             g.access_token_expires_at, g.refresh_token_expires_at, g.refresh_started_at,
             ${syncHealth} AS sync_health, i.synced_at, ls.started_at AS last_sync_run_at
      FROM page JOIN installs i ON i.id = page.id ${GRANT_JOIN} ${LATEST_SYNC_JOIN}
      ORDER BY ${sort.order}, i.id ${sort.dir}`;

  const filtered = term.kind !== "none" || Boolean(query.state || query.token || query.sync);
  // Unfiltered, all installs match: one read of the status index counts both. Filtered, the matching
  // installs are counted apart, through the filter's own index (a few rows for "sync failing"),
  // beside that same read, rather than by reading every install's row to test the filter.
  const countsStatement = filtered
    ? client.$queryRaw<CountRow[]>`
      SELECT s.status, s.all, coalesce(m.matching, 0)::int AS matching
      FROM (SELECT status, count(*)::int AS "all" FROM installs GROUP BY status) s
      LEFT JOIN (SELECT i.status, count(*) AS matching FROM installs i ${countJoins} WHERE ${where} GROUP BY i.status) m ON m.status = s.status`
    : client.$queryRaw<CountRow[]>`SELECT status, count(*)::int AS "all", count(*)::int AS matching FROM installs GROUP BY status`;
  const [firstRead, countRows] = await Promise.all([readPage(query.page), countsStatement]);

  const counts = Object.fromEntries(INSTALL_STATUSES.map((status) => [status, { all: 0, matching: 0 }])) as InstallList["counts"];
  for (const row of countRows) counts[row.status] = { all: row.all, matching: row.matching };
  const total = INSTALL_STATUSES.reduce((sum, status) => sum + counts[status].all, 0);
  const matching = INSTALL_STATUSES.reduce((sum, status) => sum + counts[status].matching, 0);

  // Past the last page (an old link, a list that shrank): the last page instead, one more query.
  const lastPage = Math.max(0, Math.ceil(matching / query.perPage) - 1);
  let page = query.page;
  let rows = firstRead;
  if (page > lastPage) {
    page = lastPage;
    rows = matching > 0 ? await readPage(page) : [];
  }

  return {
    items: rows.map(toItem),
    page,
    perPage: query.perPage,
    matching,
    counts,
    total,
    filtered,
    asOf: now,
  };
}

function toItem(row: PageRow): InstallListItem {
  return {
    id: row.id,
    installId: row.install_id,
    operatorId: row.operator_id,
    operatorName: row.operator_name,
    slug: row.slug,
    status: row.status,
    statusChangedAt: row.status_changed_at,
    createdAt: row.created_at,
    tokenHealth: row.token_health,
    accessTokenExpiresAt: row.access_token_expires_at,
    refreshTokenExpiresAt: row.refresh_token_expires_at,
    refreshStartedAt: row.refresh_started_at,
    syncHealth: row.sync_health,
    syncedAt: row.synced_at,
    lastSyncRunAt: row.last_sync_run_at,
  };
}
