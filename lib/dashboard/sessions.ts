// The sessions pages' reads (issue 13): the install's charges (GET /charges; the scope
// charge-transactions:read) from its local copy (synced_charges, written by lib/sync), newest first,
// with each charge point's name joined from the copy of charge points, filtered by a date range (UTC
// days) and a charge point. Also the CSV export of the same filtered list, streamed in batches.
//
// Order: newest start first (`started_at DESC, external_id DESC`, the index
// synced_charges_install_row_id_started_at_external_id_idx). PostgreSQL puts NULLs first in a
// descending order: a charge with no start yet (reserved, scheduled) is the newest there is.
import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import { firstValues } from "./charge-points";
import { csvRecord } from "./csv";

export const SESSION_PER_PAGE_CHOICES = [25, 50, 100] as const;
const DAY_MS = 86_400_000;

/** A UTC calendar day as an `<input type="date">` sends it; anything else is no bound at all. */
const DaySchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s))
  .optional()
  .catch(undefined);

/** The list's (and the export's) query string: anything malformed falls back to its default. */
export const SessionQuerySchema = z
  .object({
    from: DaySchema,
    to: DaySchema,
    chargePoint: z
      .string()
      .regex(/^\d{1,19}$/)
      .optional()
      .catch(undefined),
    page: z.coerce.number().int().min(0).max(10_000).catch(0),
    perPage: z.coerce
      .number()
      .int()
      .refine((n) => (SESSION_PER_PAGE_CHOICES as readonly number[]).includes(n))
      .catch(25),
  })
  // A range given backwards is read the way round it was meant.
  .transform((q) => (q.from && q.to && q.from > q.to ? { ...q, from: q.to, to: q.from } : q));
export type SessionQuery = z.infer<typeof SessionQuerySchema>;
export type SessionFilters = Pick<SessionQuery, "from" | "to" | "chargePoint">;

export function parseSessionQuery(params: Record<string, string | string[] | undefined> | URLSearchParams): SessionQuery {
  const flat = params instanceof URLSearchParams ? Object.fromEntries([...new Set(params.keys())].map((k) => [k, params.get(k) ?? undefined])) : firstValues(params);
  return SessionQuerySchema.parse(flat);
}

export function isFiltered(filters: SessionFilters): boolean {
  return Boolean(filters.from || filters.to || filters.chargePoint);
}

export type SessionRow = {
  id: string;
  chargePointId: string | null;
  chargePointName: string | null;
  state: string | null;
  type: string | null;
  consumedKwh: number | null;
  startedAt: Date | null;
  stoppedAt: Date | null;
  price: number | null;
  cost: number | null;
  currency: string | null;
  currencyDecimals: number | null;
};

type RawRow = {
  external_id: string;
  charge_point_id: string | null;
  charge_point_name: string | null;
  state: string | null;
  type: string | null;
  consumed_kwh: Prisma.Decimal | null;
  started_at: Date | null;
  stopped_at: Date | null;
  price: Prisma.Decimal | null;
  cost: Prisma.Decimal | null;
  currency: string | null;
  currency_decimals: number | null;
};

const toNumber = (value: Prisma.Decimal | null) => (value === null ? null : Number(value));

function toRow(row: RawRow): SessionRow {
  return {
    id: row.external_id,
    chargePointId: row.charge_point_id,
    chargePointName: row.charge_point_name,
    state: row.state,
    type: row.type,
    consumedKwh: toNumber(row.consumed_kwh),
    startedAt: row.started_at,
    stoppedAt: row.stopped_at,
    price: toNumber(row.price),
    cost: toNumber(row.cost),
    currency: row.currency,
    currencyDecimals: row.currency_decimals,
  };
}

// The charge point's name from the copy; a charge point the service no longer lists keeps its name
// here (the deletion mark does not erase history).
const SELECT = Prisma.sql`
  SELECT c.external_id, c.charge_point_id, p.name AS charge_point_name, c.state, c.type, c.consumed_kwh,
         c.started_at, c.stopped_at, c.price, c.cost, c.currency, c.currency_decimals
  FROM synced_charges c
  LEFT JOIN synced_charge_points p ON p.install_row_id = c.install_row_id AND p.external_id = c.charge_point_id`;

/** The WHERE clause of a filtered list: the install's charges still listed, in the range (UTC days, both ends included). */
function whereOf(installRowId: string, filters: SessionFilters): Prisma.Sql {
  const conditions = [Prisma.sql`c.install_row_id = ${installRowId}::uuid`, Prisma.sql`c.deleted_at IS NULL`];
  if (filters.from) conditions.push(Prisma.sql`c.started_at >= ${new Date(`${filters.from}T00:00:00Z`)}`);
  if (filters.to) conditions.push(Prisma.sql`c.started_at < ${new Date(Date.parse(`${filters.to}T00:00:00Z`) + DAY_MS)}`);
  if (filters.chargePoint) conditions.push(Prisma.sql`c.charge_point_id = ${filters.chargePoint}`);
  return Prisma.sql`WHERE ${Prisma.join(conditions, " AND ")}`;
}

export type SessionList = { items: SessionRow[]; total: number; page: number; perPage: number; filtered: boolean };

/** One page of the install's sessions, newest first. Offset pagination, bounded by the schema (page ≤ 10,000). */
export async function listSessions(installRowId: string, query: SessionQuery): Promise<SessionList> {
  const where = whereOf(installRowId, query);
  const [rows, [count]] = await Promise.all([
    db().$queryRaw<RawRow[]>`${SELECT} ${where} ORDER BY c.started_at DESC, c.external_id DESC LIMIT ${query.perPage} OFFSET ${query.page * query.perPage}`,
    db().$queryRaw<{ total: number }[]>`SELECT count(*)::int AS total FROM synced_charges c ${where}`,
  ]);
  return { items: rows.map(toRow), total: count?.total ?? 0, page: query.page, perPage: query.perPage, filtered: isFiltered(query) };
}

/** The charge point named in the filter, for the page's heading (null: not one of the install's). */
export async function chargePointName(installRowId: string, chargePointId: string): Promise<{ id: string; name: string | null } | null> {
  const row = await db().syncedChargePoint.findUnique({
    where: { installRowId_externalId: { installRowId, externalId: chargePointId } },
    select: { externalId: true, name: true },
  });
  return row ? { id: row.externalId, name: row.name } : null;
}

/** The most recent sessions of one charge point (its detail page). */
export async function recentSessionsOf(installRowId: string, chargePointId: string, limit = 10): Promise<SessionRow[]> {
  const rows = await db().$queryRaw<RawRow[]>`${SELECT} ${whereOf(installRowId, { chargePoint: chargePointId })}
    ORDER BY c.started_at DESC, c.external_id DESC LIMIT ${limit}`;
  return rows.map(toRow);
}

/** Fields of the stored record the detail shows beyond the mapped columns, read tolerantly. */
const SessionRawSchema = z.object({
  completedAt: z.string().nullish().catch(null),
  failedAt: z.string().nullish().catch(null),
  stopReason: z.string().nullish().catch(null),
  failureReason: z.string().nullish().catch(null),
  startMeterKwh: z.number().nullish().catch(null),
  endMeterKwh: z.number().nullish().catch(null),
});

export type SessionDetail = SessionRow & {
  completedAt: Date | null;
  failedAt: Date | null;
  stopReason: string | null;
  failureReason: string | null;
  startMeterKwh: number | null;
  endMeterKwh: number | null;
};

const toDate = (value: string | null | undefined) => {
  const date = value ? new Date(value) : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
};

/** One session of the install, or null (unknown, or another install's: the key includes the install). */
export async function loadSession(installRowId: string, id: string): Promise<SessionDetail | null> {
  if (!/^\d{1,19}$/.test(id)) return null;
  const [row] = await db().$queryRaw<(RawRow & { raw: unknown })[]>`
    SELECT c.external_id, c.charge_point_id, p.name AS charge_point_name, c.state, c.type, c.consumed_kwh,
           c.started_at, c.stopped_at, c.price, c.cost, c.currency, c.currency_decimals, c.raw
    FROM synced_charges c
    LEFT JOIN synced_charge_points p ON p.install_row_id = c.install_row_id AND p.external_id = c.charge_point_id
    WHERE c.install_row_id = ${installRowId}::uuid AND c.external_id = ${id} AND c.deleted_at IS NULL`;
  if (!row) return null;
  const extra = SessionRawSchema.safeParse(row.raw);
  const raw = extra.success ? extra.data : SessionRawSchema.parse({});
  return {
    ...toRow(row),
    completedAt: toDate(raw.completedAt),
    failedAt: toDate(raw.failedAt),
    stopReason: raw.stopReason ?? null,
    failureReason: raw.failureReason ?? null,
    startMeterKwh: raw.startMeterKwh ?? null,
    endMeterKwh: raw.endMeterKwh ?? null,
  };
}

// ---- CSV export --------------------------------------------------------------------------------

const EXPORT_BATCH = 1_000;

/**
 * The filtered list, newest first, in batches: keyset pagination on the list's own order, so each
 * batch is one index range, however far into 20,000 charges the export is (an OFFSET would re-read
 * every earlier row for each batch). NULL starts come first in this order (see the file's header),
 * which the key condition has to spell out: a row comparison with a NULL is never true.
 */
export async function* sessionBatches(installRowId: string, filters: SessionFilters): AsyncGenerator<SessionRow[]> {
  const where = whereOf(installRowId, filters);
  let after: { startedAt: Date | null; id: string } | null = null;
  for (;;) {
    const key: Prisma.Sql = !after
      ? Prisma.empty
      : after.startedAt === null
        ? Prisma.sql`AND (c.started_at IS NOT NULL OR c.external_id < ${after.id})`
        : Prisma.sql`AND c.started_at IS NOT NULL AND (c.started_at, c.external_id) < (${after.startedAt}, ${after.id})`;
    const rows: RawRow[] = await db().$queryRaw<RawRow[]>`${SELECT} ${where} ${key} ORDER BY c.started_at DESC, c.external_id DESC LIMIT ${EXPORT_BATCH}`;
    if (rows.length === 0) return;
    yield rows.map(toRow);
    if (rows.length < EXPORT_BATCH) return;
    const last = rows.at(-1)!;
    after = { startedAt: last.started_at, id: last.external_id };
  }
}

const CSV_HEADER = [
  "session_id",
  "started_at_utc",
  "stopped_at_utc",
  "charge_point_id",
  "charge_point_name",
  "state",
  "type",
  "energy_kwh",
  "duration_minutes",
  "price",
  "cost",
  "currency",
] as const;

function csvValues(row: SessionRow): (string | number | null)[] {
  const durationMs = row.startedAt && row.stoppedAt ? row.stoppedAt.getTime() - row.startedAt.getTime() : null;
  return [
    row.id,
    row.startedAt?.toISOString() ?? null,
    row.stoppedAt?.toISOString() ?? null,
    row.chargePointId,
    row.chargePointName,
    row.state,
    row.type,
    row.consumedKwh,
    durationMs === null ? null : Math.round(durationMs / 60_000),
    row.price,
    // Each amount in its record's currency, as the service recorded it: never converted (lib/dashboard/config.ts).
    row.cost,
    row.currency,
  ];
}

/**
 * The filtered list as a CSV stream: the header, then one batch at a time, read only as the client
 * takes it (a pull stream), so a 20,000-row export holds one batch in memory. A database error
 * mid-way ends the download with an error rather than a short file that looks whole.
 */
export function sessionsCsvStream(installRowId: string, filters: SessionFilters): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const batches = sessionBatches(installRowId, filters);
  let headerSent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(csvRecord(CSV_HEADER)));
        return;
      }
      const next = await batches.next();
      if (next.done) {
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(next.value.map((row) => csvRecord(csvValues(row))).join("")));
    },
    async cancel() {
      await batches.return(undefined);
    },
  });
}
