// The charge points pages' reads (issue 13). Two sources, and the page says which one it shows:
// - the install's local copy (synced_charge_points, written by lib/sync) once the sync's first pass
//   over the list has ended: search, filters, sort and pagination all run here, in the database;
// - before that, the live API (lib/installs/dashboard.ts fetchInstallChargePoints), which offers
//   only `page` and `perPage` (public-facts.md "Lists and pagination"): no search, no filters.
// Every query is scoped to the install (its rows only) and bounded (one page at a time). An operator
// has hundreds of charge points at most (lib/sync/charge-points.ts), so a search is a scan of the
// install's rows by its primary key's prefix; no text index is needed at that size.
import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { translator, type Translator } from "@/lib/i18n/messages";
import { Prisma } from "@/lib/db/generated/client";
import { findSyncedResource } from "@/lib/sync/resources";

/** English, for a caller without a request (the staff console, scripts); pages pass the operator's translator. */
const ENGLISH = translator("en");

/**
 * The copy of teams, when the app keeps one (lib/sync/resources.ts). Looked up by name, so that a fork
 * that removes the teams resource loses the pages' Team column, filter and field with it.
 */
const TEAMS = findSyncedResource("teams");
export const SHOWS_TEAMS = TEAMS !== undefined;

export const PER_PAGE_CHOICES = [10, 25, 50, 100] as const;
export const SORTS = ["name", "state", "power", "city"] as const;
export type ChargePointSort = (typeof SORTS)[number];

/** The service's record ids are int64 (public-facts.md "Records"); kept as text, like the copy. */
const RecordIdSchema = z.string().regex(/^\d{1,19}$/);

/**
 * The list's query string. Anything malformed falls back to its default (never an error page):
 * a stranger's or an old bookmark's link still shows the list.
 */
export const ChargePointQuerySchema = z.object({
  q: z
    .string()
    // Control characters out (PostgreSQL refuses a NUL in text), then at most 100 characters.
    .transform((s) => s.replace(/[\u0000-\u001f\u007f]/g, " ").trim().slice(0, 100))
    .catch(""),
  state: z
    .string()
    .regex(/^[a-z-]{1,40}$/)
    .optional()
    .catch(undefined),
  type: z.enum(["ac", "dc"]).optional().catch(undefined),
  site: RecordIdSchema.optional().catch(undefined),
  team: RecordIdSchema.optional().catch(undefined),
  sort: z.enum(SORTS).catch("name"),
  dir: z.enum(["asc", "desc"]).catch("asc"),
  page: z.coerce.number().int().min(0).max(10_000).catch(0),
  perPage: z.coerce
    .number()
    .int()
    .refine((n) => (PER_PAGE_CHOICES as readonly number[]).includes(n))
    .catch(25),
});
export type ChargePointQuery = z.infer<typeof ChargePointQuerySchema>;

/** A query string as Next.js hands it over: a repeated key arrives as an array; the first one counts. */
export function parseChargePointQuery(params: Record<string, string | string[] | undefined>): ChargePointQuery {
  return ChargePointQuerySchema.parse(firstValues(params));
}

export function firstValues(params: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(params).map(([key, value]) => [key, Array.isArray(value) ? value[0] : value]));
}

export type ChargePointListItem = {
  id: string;
  name: string | null;
  state: string | null;
  type: string | null;
  maxKw: number | null;
  evseId: string | null;
  serialNumber: string | null;
  addressLabel: string | null;
  city: string | null;
  siteId: string | null;
  teamId: string | null;
};

export type ChargePointList = { items: ChargePointListItem[]; total: number; page: number; perPage: number; filtered: boolean };

const LIST_SELECT = {
  externalId: true,
  name: true,
  state: true,
  type: true,
  maxKw: true,
  evseId: true,
  serialNumber: true,
  addressLabel: true,
  city: true,
  siteId: true,
  teamId: true,
} satisfies Prisma.SyncedChargePointSelect;

function toItem(row: Prisma.SyncedChargePointGetPayload<{ select: typeof LIST_SELECT }>): ChargePointListItem {
  const { externalId, maxKw, ...rest } = row;
  return { id: externalId, maxKw: maxKw === null ? null : Number(maxKw), ...rest };
}

/** The install's charge points that the copy still lists (a record the service no longer lists is marked deleted, lib/sync/deletions.ts). */
function listedBy(installRowId: string): Prisma.SyncedChargePointWhereInput {
  return { installRowId, deletedAt: null };
}

function whereOf(installRowId: string, query: ChargePointQuery): Prisma.SyncedChargePointWhereInput {
  // Prisma's `contains` is a LIKE pattern as given: `%` and `_` in a search would be wildcards, so
  // they (and the escape character itself) are escaped to mean themselves.
  const text = query.q ? { contains: query.q.replace(/[\\%_]/g, "\\$&"), mode: "insensitive" as const } : undefined;
  return {
    ...listedBy(installRowId),
    ...(text
      ? { OR: [{ name: text }, { evseId: text }, { serialNumber: text }, { addressLabel: text }, { city: text }] }
      : {}),
    ...(query.state ? { state: query.state } : {}),
    ...(query.type ? { type: query.type } : {}),
    ...(query.site ? { siteId: query.site } : {}),
    ...(query.team ? { teamId: query.team } : {}),
  };
}

function orderOf(query: ChargePointQuery): Prisma.SyncedChargePointOrderByWithRelationInput[] {
  const sort = { sort: query.dir, nulls: "last" } as const;
  const primary: Prisma.SyncedChargePointOrderByWithRelationInput =
    query.sort === "state" ? { state: sort } : query.sort === "power" ? { maxKw: sort } : query.sort === "city" ? { city: sort } : { name: sort };
  // The record id last, so that rows with equal keys keep one order from page to page.
  return [primary, { externalId: "asc" }];
}

export function isFiltered(query: ChargePointQuery): boolean {
  return Boolean(query.q || query.state || query.type || query.site || query.team);
}

/** One page of the install's charge points from the local copy, searched, filtered and sorted. */
export async function listChargePoints(installRowId: string, query: ChargePointQuery): Promise<ChargePointList> {
  const where = whereOf(installRowId, query);
  const [rows, total] = await Promise.all([
    db().syncedChargePoint.findMany({ where, orderBy: orderOf(query), skip: query.page * query.perPage, take: query.perPage, select: LIST_SELECT }),
    db().syncedChargePoint.count({ where }),
  ]);
  return { items: rows.map(toItem), total, page: query.page, perPage: query.perPage, filtered: isFiltered(query) };
}

export type FilterOptions = {
  states: string[];
  /** The install's sites, each with the words siteLabel gives it. */
  sites: { id: string; label: string }[];
  /**
   * Teams the install's charge points belong to; the name when the copy of teams has it (teams:read
   * granted). Null when the app keeps no copy of teams (SHOWS_TEAMS): no Team column or filter then.
   */
  teams: { id: string; name: string | null }[] | null;
  /** Whether the install has any charge point at all: "No charge points" rather than "none match". */
  any: boolean;
};

/** The values the filters offer: only those the install's charge points have, so no choice leads to an empty page. */
export async function loadFilterOptions(installRowId: string, t: Translator = ENGLISH): Promise<FilterOptions> {
  const where = listedBy(installRowId);
  const [first, states, sites, teamIds] = await Promise.all([
    db().syncedChargePoint.findFirst({ where, select: { externalId: true } }),
    db().syncedChargePoint.findMany({ where: { ...where, state: { not: null } }, distinct: ["state"], select: { state: true }, orderBy: { state: "asc" } }),
    db().syncedChargePoint.findMany({ where: { ...where, siteId: { not: null } }, distinct: ["siteId"], select: { siteId: true }, orderBy: { siteId: "asc" } }),
    db().syncedChargePoint.findMany({ where: { ...where, teamId: { not: null } }, distinct: ["teamId"], select: { teamId: true }, orderBy: { teamId: "asc" } }),
  ]);
  const ids = teamIds.map((t) => t.teamId!);
  const names = await teamNames(installRowId, ids);
  const teams = SHOWS_TEAMS
    ? ids.map((id) => ({ id, name: names.get(id) ?? null })).sort((a, b) => (a.name ?? `\uffff${a.id}`).localeCompare(b.name ?? `\uffff${b.id}`))
    : null;
  const siteIds = sites.map((s) => s.siteId!);
  const labels = await siteLabels(installRowId, siteIds, t);
  return { states: states.map((s) => s.state!), sites: siteIds.map((id) => ({ id, label: labels.get(id) ?? siteLabel(id, null, t) })), teams, any: first !== null };
}

/**
 * A site in words. The API has no site resource and gives a site no name (public-facts.md: a charge
 * point has only `siteId`), but its charge points carry addresses: a site is named by the address
 * most of its charge points give, with the id kept for the operator's own records (A133). "Site
 * <id>" only when none of them gives an address. In the reader's words (`t`: the operator's on the
 * dashboard, lib/i18n/request.ts; English by default).
 */
export function siteLabel(siteId: string, place: { address: string; others: number } | null, t: Translator = ENGLISH): string {
  if (!place) return t("site.unnamed", { id: siteId });
  if (place.others > 0) return t.plural("site.addresses", place.others, { address: place.address, id: siteId });
  return t("site.address", { address: place.address, id: siteId });
}

/**
 * Each site's label from its charge points' addresses: one GROUP BY over the install's rows (a few
 * hundred at most), the most common address first (ties by text, so the label does not change
 * between visits).
 */
export async function siteLabels(installRowId: string, siteIds: readonly string[], t: Translator = ENGLISH): Promise<Map<string, string>> {
  if (siteIds.length === 0) return new Map();
  const rows = await db().$queryRaw<{ site_id: string; address: string; addresses: number }[]>`
    SELECT DISTINCT ON (site_id) site_id, address, (count(*) OVER (PARTITION BY site_id))::int AS addresses
    FROM (
      SELECT site_id, coalesce(address_label, city) AS address, count(*) AS n
      FROM synced_charge_points
      WHERE install_row_id = ${installRowId}::uuid AND deleted_at IS NULL
        AND site_id = ANY(${[...siteIds]}::text[]) AND coalesce(address_label, city) IS NOT NULL
      GROUP BY site_id, coalesce(address_label, city)
    ) AS per_address
    ORDER BY site_id, n DESC, address`;
  return new Map(rows.map((r) => [r.site_id, siteLabel(r.site_id, { address: r.address, others: r.addresses - 1 }, t)]));
}

/** Team names from the copy of teams (empty when teams:read was not granted: the pages then show the team's id). */
export async function teamNames(installRowId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (!TEAMS || ids.length === 0) return new Map();
  // The record's own name (the `raw` every synced table keeps), so this read needs no teams model.
  const rows = await db().$queryRaw<{ external_id: string; name: string | null }[]>`
    SELECT external_id, raw->>'name' AS name FROM ${Prisma.raw(TEAMS.table)}
    WHERE install_row_id = ${installRowId}::uuid AND external_id = ANY(${[...ids]}::text[])`;
  return new Map(rows.filter((r) => r.name).map((r) => [r.external_id, r.name!]));
}

const ConnectorSchema = z.object({
  id: z.union([z.number(), z.string()]).transform(String),
  identifier: z.union([z.string(), z.number()]).transform(String).nullish().catch(null),
  name: z.string().nullish().catch(null),
});

/** The parts of the stored record the detail page shows beyond the mapped columns, read tolerantly (the contract does not show them all). */
const DetailRawSchema = z.object({
  visibility: z.string().nullish().catch(null),
  lastConnectedAt: z.string().nullish().catch(null),
  location: z
    .object({ address: z.object({ address1: z.string().nullish().catch(null), zip: z.string().nullish().catch(null) }).nullish().catch(null) })
    .nullish()
    .catch(null),
});

export type ChargePointDetail = ChargePointListItem & {
  teamName: string | null;
  /** The site in words (siteLabel), or null for a charge point without a site. */
  siteLabel: string | null;
  isActive: boolean | null;
  country: string | null;
  address1: string | null;
  zip: string | null;
  latitude: number | null;
  longitude: number | null;
  connectors: { id: string; identifier: string | null; name: string | null }[];
  visibility: string | null;
  lastConnectedAt: Date | null;
};

/**
 * One charge point of the install, or null: an id of another install's charge point reads as
 * unknown (the key includes the install), so the page answers 404 and never says whose it is.
 */
export async function loadChargePoint(installRowId: string, id: string, t: Translator = ENGLISH): Promise<ChargePointDetail | null> {
  if (!RecordIdSchema.safeParse(id).success) return null;
  const row = await db().syncedChargePoint.findFirst({
    where: { ...listedBy(installRowId), externalId: id },
    select: { ...LIST_SELECT, isActive: true, country: true, latitude: true, longitude: true, connectors: true, raw: true },
  });
  if (!row) return null;
  const { isActive, country, latitude, longitude, connectors, raw, ...listed } = row;
  const extra = DetailRawSchema.safeParse(raw);
  const lastConnectedAt = extra.success && extra.data.lastConnectedAt ? new Date(extra.data.lastConnectedAt) : null;
  const [names, sites] = await Promise.all([
    row.teamId ? teamNames(installRowId, [row.teamId]) : new Map<string, string>(),
    row.siteId ? siteLabels(installRowId, [row.siteId], t) : new Map<string, string>(),
  ]);
  return {
    ...toItem(listed),
    teamName: row.teamId ? (names.get(row.teamId) ?? null) : null,
    siteLabel: row.siteId ? (sites.get(row.siteId) ?? siteLabel(row.siteId, null, t)) : null,
    isActive,
    country,
    latitude,
    longitude,
    address1: extra.success ? (extra.data.location?.address?.address1 ?? null) : null,
    zip: extra.success ? (extra.data.location?.address?.zip ?? null) : null,
    connectors: z.array(z.unknown()).catch([]).parse(connectors ?? []).flatMap((c) => {
      const parsed = ConnectorSchema.safeParse(c);
      return parsed.success ? [{ id: parsed.data.id, identifier: parsed.data.identifier ?? null, name: parsed.data.name ?? null }] : [];
    }),
    visibility: extra.success ? (extra.data.visibility ?? null) : null,
    lastConnectedAt: lastConnectedAt && !Number.isNaN(lastConnectedAt.getTime()) ? lastConnectedAt : null,
  };
}

/** Choices for the sessions page's charge point filter: names and ids, bounded (a select of thousands helps nobody). */
export async function listChargePointChoices(installRowId: string, limit = 500): Promise<{ id: string; name: string | null }[]> {
  const rows = await db().syncedChargePoint.findMany({
    where: listedBy(installRowId),
    orderBy: [{ name: { sort: "asc", nulls: "last" } }, { externalId: "asc" }],
    take: limit,
    select: { externalId: true, name: true },
  });
  return rows.map((r) => ({ id: r.externalId, name: r.name }));
}
