// Deleting and changing an operator's records through the control API (README decision 44), so a test can prove that
// an app's sync marks a record that is no longer listed as deleted and picks up a change. The edits live in the state
// (operator → record id → deleted / changed fields) and are applied on top of the seed and the live data
// (operators.ts): the seed itself never changes.
import { z } from "zod";
import type { SandboxContext } from "./context.js";
import type { RecordKind } from "./operators.js";
import type { RecordEdit } from "./store.js";

const CP_STATES = [
  "available", "busy", "busy-blocked", "busy-charging", "busy-non-charging", "busy-non-released", "busy-reserved", "busy-scheduled",
  "error", "disconnected", "passive", "maintenance", "other",
] as const;
const CHARGE_STATES = ["paying", "reserved", "starting", "charging", "stopping", "paused", "scheduled", "stopped", "releasing", "released", "completed", "other"] as const;

/** What a test may change, per kind of record (fields of public-facts.md "Records"); at least one field. */
export const recordPatchSchemas = {
  chargePoints: z
    .object({
      name: z.string().min(1).max(200).nullable(),
      state: z.enum(CP_STATES),
      visibility: z.enum(["private", "public"]),
      isActive: z.boolean(),
    })
    .partial()
    .strict(),
  charges: z
    .object({
      state: z.enum(CHARGE_STATES),
      consumedKwh: z.number().min(0).max(100_000),
      stopReason: z.string().min(1).max(100).nullable(),
    })
    .partial()
    .strict(),
  teams: z
    .object({
      name: z.string().min(1).max(200),
      type: z.enum(["private", "professional", "operator"]),
    })
    .partial()
    .strict(),
} satisfies Record<RecordKind, z.ZodType>;

export const RECORD_PATCH_SHAPES: Record<RecordKind, string> = {
  chargePoints: `any of {"name": string | null, "state": ${CP_STATES.map((s) => `"${s}"`).join(" | ")}, "visibility": "private" | "public", "isActive": boolean}`,
  charges: `any of {"state": ${CHARGE_STATES.map((s) => `"${s}"`).join(" | ")}, "consumedKwh": number ≥ 0, "stopReason": string | null}`,
  teams: 'any of {"name": string, "type": "private" | "professional" | "operator"}',
};

/** The path segment of each kind in /_sandbox/operators/:id/<segment>/:recordId. */
export const RECORD_KIND_SEGMENTS: Record<string, RecordKind> = { "charge-points": "chargePoints", charges: "charges", teams: "teams" };

export type EditOutcome<T> = { ok: true; record: T | null } | { ok: false; status: 404; message: string };

function editOf(ctx: SandboxContext, operatorId: number, kind: RecordKind, recordId: number): RecordEdit | undefined {
  return ctx.store.state.recordEdits[String(operatorId)]?.[kind][String(recordId)];
}

function writeEdit(ctx: SandboxContext, operatorId: number, kind: RecordKind, recordId: number, edit: RecordEdit): void {
  const key = String(operatorId);
  const edits = ctx.store.state.recordEdits;
  if (!edits[key]) edits[key] = { chargePoints: {}, charges: {}, teams: {} };
  edits[key]![kind][String(recordId)] = edit;
  ctx.operators.invalidate();
  ctx.store.changed();
}

/** Whether the API lists the record now (seeded or live, not deleted). */
function listed(ctx: SandboxContext, operatorId: number, kind: RecordKind, recordId: number): { id: number } | undefined {
  return (ctx.operators.find(operatorId)?.[kind] as { id: number }[] | undefined)?.find((r) => r.id === recordId);
}

/** The record is no longer listed by the API (a charge of a deleted charge point stays listed, as history does). */
export function deleteRecord(ctx: SandboxContext, operatorId: number, kind: RecordKind, recordId: number): EditOutcome<never> {
  if (!listed(ctx, operatorId, kind, recordId)) return { ok: false, status: 404, message: `operator ${operatorId} lists no ${kind} record ${recordId}` };
  const previous = editOf(ctx, operatorId, kind, recordId);
  writeEdit(ctx, operatorId, kind, recordId, { deletedAt: ctx.clock.now().toISOString(), patch: previous?.patch ?? {}, updatedAt: previous?.updatedAt ?? null });
  ctx.store.addEvent("control", ctx.clock.now(), { action: "record_deleted", operator_id: operatorId, kind, record_id: recordId });
  return { ok: true, record: null };
}

/** A deleted record is listed again, as it was (with its changes). */
export function restoreRecord(ctx: SandboxContext, operatorId: number, kind: RecordKind, recordId: number): EditOutcome<unknown> {
  const previous = editOf(ctx, operatorId, kind, recordId);
  if (!previous || previous.deletedAt === null) return { ok: false, status: 404, message: `operator ${operatorId} has no deleted ${kind} record ${recordId}` };
  writeEdit(ctx, operatorId, kind, recordId, { ...previous, deletedAt: null });
  ctx.store.addEvent("control", ctx.clock.now(), { action: "record_restored", operator_id: operatorId, kind, record_id: recordId });
  return { ok: true, record: listed(ctx, operatorId, kind, recordId) ?? null };
}

/** Changes fields of a listed record; charge points and teams get `updatedAt` = now (the sandbox clock). */
export function patchRecord(
  ctx: SandboxContext,
  operatorId: number,
  kind: RecordKind,
  recordId: number,
  patch: Record<string, string | number | boolean | null>,
  by: "control" | "api" = "control",
): EditOutcome<unknown> {
  if (!listed(ctx, operatorId, kind, recordId)) return { ok: false, status: 404, message: `operator ${operatorId} lists no ${kind} record ${recordId}` };
  const previous = editOf(ctx, operatorId, kind, recordId);
  writeEdit(ctx, operatorId, kind, recordId, { deletedAt: null, patch: { ...previous?.patch, ...patch }, updatedAt: ctx.clock.now().toISOString() });
  ctx.store.addEvent("control", ctx.clock.now(), { action: "record_changed", by, operator_id: operatorId, kind, record_id: recordId, fields: Object.keys(patch) });
  return { ok: true, record: listed(ctx, operatorId, kind, recordId) ?? null };
}
