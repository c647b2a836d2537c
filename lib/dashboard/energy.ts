// The Energy section: one EVSE's charge history, read live from the service's beta operation
// (contract §4.3). Live, not from the local copy: it is per EVSE and beta, nothing syncs it. Its
// method, path and parameter names are configuration (ENERGY_API_*: the contract does not show them),
// and its answer is read tolerantly (its structure may change, §9): unknown fields are ignored, a
// record the app cannot read is skipped and counted, and an answer of another shape becomes a state
// the page explains ("not understood"), never an exception.
import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import type { InstallSummary } from "@/lib/installs/dashboard";
import { fetchEvseChargeHistory, type EvseRef } from "@/lib/partner-api/client";
import { callLive, type LiveFailure } from "./live-call";

/** contract §4.3: the operation's scope. */
export const ENERGY_SCOPE = "energy:read";

/** Rows asked for per view: the operation's answer is not paginated (as far as is known), so bound it. */
export const HISTORY_LIMIT = 500;
/** EVSEs offered in the picker: the charge points the local copy holds, a bounded, indexed read. */
const MAX_EVSES = 1000;
/** A range longer than this is refused before any request (a year of one EVSE's days). */
const MAX_RANGE_DAYS = 366;

/** One EVSE the operator can pick: a charge point's connector (the operation's three path parameters). */
export type EvseOption = EvseRef & { key: string; label: string };

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const dayOrUndefined = z
  .string()
  .regex(DAY)
  .refine((value) => !Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
  .optional()
  .catch(undefined);

/** The page's query string: which EVSE, and which UTC days (both ends included). Bad values fall back to none. */
export const EnergyQuerySchema = z.object({
  evse: z.string().max(300).optional().catch(undefined),
  from: dayOrUndefined,
  to: dayOrUndefined,
});
export type EnergyQuery = z.infer<typeof EnergyQuerySchema>;

/** A record of the history, as far as the app reads it; everything else in it is ignored. */
const HistoryRecordSchema = z.object({
  chargeId: z.union([z.number(), z.string()]).transform(String).optional(),
  startedAt: z.iso.datetime({ offset: true }),
  stoppedAt: z.iso.datetime({ offset: true }).nullish().catch(null),
  energyKwh: z.number().min(0),
  durationSeconds: z.number().min(0).nullish().catch(null),
  state: z.string().max(50).nullish().catch(null),
});
export type HistoryRecord = z.infer<typeof HistoryRecordSchema>;

/** The envelope: `data` must be a list; the rest (meta...) is not needed. */
const HistoryEnvelopeSchema = z.object({ data: z.array(z.unknown()) });

export type EnergyDay = { day: string; energyKwh: number; sessions: number };

export type EnergyView =
  | { state: "not_granted" }
  | { state: "no_evses" }
  | { state: "bad_range"; evses: EvseOption[]; selected: EvseOption; query: EnergyQuery }
  | { state: "not_enabled"; evses: EvseOption[]; selected: EvseOption; query: EnergyQuery }
  | { state: "not_understood"; evses: EvseOption[]; selected: EvseOption; query: EnergyQuery }
  | { state: "failed"; failure: LiveFailure; evses: EvseOption[]; selected: EvseOption; query: EnergyQuery }
  | {
      state: "ok";
      evses: EvseOption[];
      selected: EvseOption;
      query: EnergyQuery;
      records: HistoryRecord[];
      days: EnergyDay[];
      totalKwh: number;
      /** Records the app could not read (a field it needs missing or of another type). */
      skipped: number;
      /** The service returned as many rows as asked for: there may be more. */
      truncated: boolean;
    };

/** A connector list as the sync stores it (`[{id, identifier, name}]`), read tolerantly. */
const ConnectorsSchema = z
  .array(
    z
      .object({
        id: z.union([z.number().int(), z.string().min(1)]).transform(String),
        identifier: z.string().nullish().catch(null),
        name: z.string().nullish().catch(null),
      })
      .nullable()
      .catch(null),
  )
  .catch([]);

/** The EVSEs of the install's charge points, from the local copy: one option per connector. */
export async function loadEvseOptions(installRowId: string): Promise<EvseOption[]> {
  const rows = await db().syncedChargePoint.findMany({
    where: { installRowId, deletedAt: null, evseId: { not: null } },
    select: { externalId: true, name: true, evseId: true, connectors: true },
    orderBy: [{ name: "asc" }, { externalId: "asc" }],
    take: MAX_EVSES,
  });
  return rows.flatMap((row) =>
    ConnectorsSchema.parse(row.connectors ?? [])
      .filter((c) => c !== null)
      .map((connector) => ({
        key: `${row.externalId}:${connector.id}`,
        chargePointId: row.externalId,
        evseId: row.evseId!,
        connectorId: connector.id,
        // "Utrecht Depot HPC 01 · connector 1 (CCS2)": the charge point's name, then which of its connectors.
        label: `${row.name ?? `Charge point ${row.externalId}`} · connector ${connector.identifier ?? connector.id}${connector.name ? ` (${connector.name})` : ""}`,
      })),
  );
}

/**
 * Reads the answer tolerantly: the records it can, the count of those it cannot; null when the
 * answer is not a history at all (another shape: the beta changed, §9).
 */
export function readHistory(answer: unknown): { records: HistoryRecord[]; skipped: number } | null {
  const envelope = HistoryEnvelopeSchema.safeParse(answer);
  if (!envelope.success) return null;
  const records: HistoryRecord[] = [];
  for (const item of envelope.data.data) {
    const record = HistoryRecordSchema.safeParse(item);
    if (record.success) records.push(record.data);
  }
  const skipped = envelope.data.data.length - records.length;
  // Every record of a non-empty answer unreadable: the shape changed inside the envelope.
  if (records.length === 0 && skipped > 0) return null;
  return { records, skipped };
}

/** Energy per UTC day of the sessions' start, oldest first. */
export function energyPerDay(records: readonly HistoryRecord[]): EnergyDay[] {
  const days = new Map<string, EnergyDay>();
  for (const record of records) {
    const day = new Date(record.startedAt).toISOString().slice(0, 10);
    const entry = days.get(day) ?? { day, energyKwh: 0, sessions: 0 };
    entry.energyKwh += record.energyKwh;
    entry.sessions += 1;
    days.set(day, entry);
  }
  return [...days.values()].sort((a, b) => a.day.localeCompare(b.day)).map((d) => ({ ...d, energyKwh: Math.round(d.energyKwh * 1000) / 1000 }));
}

/** The range as the operation takes it: from the first day's start to the end of the last day (UTC). */
function rangeOf(query: EnergyQuery): { from?: string; to?: string } | null {
  const from = query.from ? new Date(`${query.from}T00:00:00Z`) : undefined;
  const to = query.to ? new Date(Date.parse(`${query.to}T00:00:00Z`) + 86_400_000) : undefined;
  if (from && to && (from >= to || to.getTime() - from.getTime() > MAX_RANGE_DAYS * 86_400_000)) return null;
  return { from: from?.toISOString(), to: to?.toISOString() };
}

/** The Energy page's data for the install and the query string. */
export async function loadEnergy(install: Pick<InstallSummary, "id" | "grantedScopes">, query: EnergyQuery): Promise<EnergyView> {
  // contract §2: a scope the operator did not grant is explained, not called to be refused.
  if (!install.grantedScopes.includes(ENERGY_SCOPE)) return { state: "not_granted" };
  const evses = await loadEvseOptions(install.id);
  if (evses.length === 0) return { state: "no_evses" };
  const selected = evses.find((e) => e.key === query.evse) ?? evses[0]!;
  const range = rangeOf(query);
  if (!range) return { state: "bad_range", evses, selected, query };

  const result = await callLive(install.id, "evse charge history", (token, call) => fetchEvseChargeHistory(token, call, selected, { ...range, limit: HISTORY_LIMIT }));
  if (!result.ok) {
    const { failure } = result;
    // Decision S47 (docs/spec-gaps.md): the service's "not enabled for this operator" is a 403 with its own errorCode.
    if (failure.kind === "forbidden" && failure.errorCode === "FEATURE_NOT_ENABLED") return { state: "not_enabled", evses, selected, query };
    if (failure.kind === "forbidden") return { state: "not_granted" };
    return { state: "failed", failure, evses, selected, query };
  }
  const history = readHistory(result.data);
  if (!history) return { state: "not_understood", evses, selected, query };
  const days = energyPerDay(history.records);
  return {
    state: "ok",
    evses,
    selected,
    query,
    records: history.records,
    days,
    totalKwh: Math.round(days.reduce((sum, d) => sum + d.energyKwh, 0) * 1000) / 1000,
    skipped: history.skipped,
    truncated: history.records.length + history.skipped >= HISTORY_LIMIT,
  };
}
