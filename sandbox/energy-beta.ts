// The EVSE charge history (contract §4.3: beta, scope energy:read, off by default, enabled per operator account on
// request). The contract shows neither its method, path, parameter names nor its answer; public-facts.md says it has
// no public route. The sandbox's choices (README decisions 46 and 47):
//
//   GET /api/v1/energy/charge-points/{chargePointId}/evses/{evseId}/connectors/{connectorId}/charges
//       path: chargePointId int64, evseId string, connectorId int32 (the contract's three: one int64, one string,
//             one int32)
//       query (all optional, empty = absent, the contract's "nullable"): from, to (date-times: the charge started at
//             or after `from` and before `to`), order ("asc" | "desc" by start), limit (int32 1-1000, default 500),
//             state, type (strings: a charge state / type of public-facts.md)
//
// An operator whose switch is off answers 403 FEATURE_NOT_ENABLED (after the scope check). The data is derived from the
// operator's charges on that charge point: a charge belongs to connector number (charge id mod connector count), so
// the same request always gives the same answer.
import { z } from "zod";
import type { SandboxContext } from "./context.js";
import type { ChargePoint, Charge, OperatorData } from "./seed.js";
import type { EnergyBetaRecord } from "./store.js";

export type EnergyBetaShape = EnergyBetaRecord["shape"];

/** The operator's switch: off unless a test or the console turned it on. */
export function energyBetaOf(ctx: SandboxContext, operatorId: number): { enabled: boolean; shape: EnergyBetaShape; changedAt: string | null } {
  const record = ctx.store.state.energyBeta[String(operatorId)];
  return record ? { ...record } : { enabled: false, shape: "current", changedAt: null };
}

/** The service operator enables (or disables) the beta for one operator account (the console or the control API). */
export function setEnergyBeta(ctx: SandboxContext, operatorId: number, setting: { enabled: boolean; shape?: EnergyBetaShape }, by: "console" | "control"): ReturnType<typeof energyBetaOf> {
  const shape = setting.shape ?? energyBetaOf(ctx, operatorId).shape;
  const now = ctx.clock.now().toISOString();
  // Written as a whole root field (state-tracking.ts journals it as one "set").
  ctx.store.state.energyBeta = { ...ctx.store.state.energyBeta, [String(operatorId)]: { enabled: setting.enabled, shape, changedAt: now } };
  ctx.store.addEvent("control", ctx.clock.now(), { action: "energy_beta", by, operator_id: operatorId, enabled: setting.enabled, shape });
  ctx.log(`EVSE charge history (beta) ${setting.enabled ? "enabled" : "disabled"} for operator ${operatorId}${shape === "changed" ? " (changed answer shape)" : ""} by ${by}`);
  ctx.store.changed();
  return energyBetaOf(ctx, operatorId);
}

const CHARGE_STATES = ["paying", "reserved", "starting", "charging", "stopping", "paused", "scheduled", "stopped", "releasing", "released", "completed", "other"] as const;
const CHARGE_TYPES = ["external", "operator", "sponsored"] as const;

/** An absent or empty query value is "not given" (the contract: optional and nullable). */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === undefined || value === "" || value === "null" ? undefined : value), schema.optional());

const dateTime = z.iso.datetime({ offset: true, message: "must be an ISO 8601 date-time, e.g. 2025-06-01T00:00:00Z" });

export const energyPathSchema = z.object({
  chargePointId: z.string().regex(/^[1-9]\d{0,18}$/, "chargePointId must be a positive int64").transform(Number),
  evseId: z.string().min(1, "evseId must not be empty").max(64, "evseId is too long"),
  connectorId: z
    .string()
    .regex(/^[1-9]\d{0,9}$/, "connectorId must be a positive int32")
    .transform(Number)
    .pipe(z.number().max(2_147_483_647, "connectorId must be a positive int32")),
});

export const energyQuerySchema = z.object({
  from: optional(dateTime),
  to: optional(dateTime),
  order: optional(z.enum(["asc", "desc"], { message: 'order must be "asc" or "desc"' })),
  limit: optional(
    z
      .string()
      .regex(/^\d+$/, "limit must be an integer between 1 and 1000")
      .transform(Number)
      .pipe(z.number().int().min(1, "limit must be an integer between 1 and 1000").max(1000, "limit must be an integer between 1 and 1000")),
  ),
  state: optional(z.enum(CHARGE_STATES, { message: `state must be one of ${CHARGE_STATES.join(", ")}` })),
  type: optional(z.enum(CHARGE_TYPES, { message: `type must be one of ${CHARGE_TYPES.join(", ")}` })),
});
export type EnergyQuery = z.infer<typeof energyQuerySchema>;

const DEFAULT_LIMIT = 500;

/** The EVSE a request names, or null when the operator has no such charge point, EVSE or connector (404). */
export function findEvse(operator: OperatorData, path: z.infer<typeof energyPathSchema>): { chargePoint: ChargePoint; connectorIndex: number } | null {
  const chargePoint = operator.chargePoints.find((cp) => cp.id === path.chargePointId);
  if (!chargePoint || chargePoint.evseId !== path.evseId) return null;
  const connectorIndex = chargePoint.connectors.findIndex((connector) => connector.id === path.connectorId);
  return connectorIndex < 0 ? null : { chargePoint, connectorIndex };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

function durationSeconds(charge: Charge): number | null {
  if (!charge.stoppedAt) return null;
  return Math.max(0, Math.round((Date.parse(charge.stoppedAt) - Date.parse(charge.startedAt)) / 1000));
}

/** The answer body, in the shape the operator's switch says (the documented one, or a later beta's). */
export function energyHistoryBody(operator: OperatorData, evse: { chargePoint: ChargePoint; connectorIndex: number }, query: EnergyQuery, shape: EnergyBetaShape): unknown {
  const { chargePoint, connectorIndex } = evse;
  const connector = chargePoint.connectors[connectorIndex]!;
  const fromMs = query.from ? Date.parse(query.from) : -Infinity;
  const toMs = query.to ? Date.parse(query.to) : Infinity;
  const matching = operator.charges
    .filter((charge) => charge.chargePointId === chargePoint.id && charge.id % chargePoint.connectors.length === connectorIndex)
    .filter((charge) => {
      const started = Date.parse(charge.startedAt);
      return started >= fromMs && started < toMs;
    })
    .filter((charge) => (query.state ? charge.state === query.state : true) && (query.type ? charge.type === query.type : true))
    .sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt) || a.id - b.id);
  if (query.order === "desc") matching.reverse();
  const limited = matching.slice(0, query.limit ?? DEFAULT_LIMIT);

  if (shape === "changed") {
    // A later beta's answer (contract §9: "its response structure may change"): other names, energy in Wh, nested.
    return {
      evse: { id: chargePoint.evseId, connector: connector.identifier },
      sessions: limited.map((charge) => ({
        ref: String(charge.id),
        period: { begin: charge.startedAt, end: charge.stoppedAt },
        energy: { value: Math.round(charge.consumedKwh * 1000), unit: "Wh" },
      })),
    };
  }
  return {
    data: limited.map((charge) => ({
      chargeId: charge.id,
      chargePointId: chargePoint.id,
      evseId: chargePoint.evseId,
      connectorId: connector.id,
      state: charge.state,
      type: charge.type,
      startedAt: charge.startedAt,
      stoppedAt: charge.stoppedAt,
      durationSeconds: durationSeconds(charge),
      energyKwh: round3(charge.consumedKwh),
      meterStartKwh: charge.startMeterKwh,
      meterStopKwh: charge.endMeterKwh,
    })),
    meta: {
      chargePointId: chargePoint.id,
      evseId: chargePoint.evseId,
      connectorId: connector.id,
      from: query.from ?? null,
      to: query.to ?? null,
      count: limited.length,
      totalCount: matching.length,
      totalEnergyKwh: round3(limited.reduce((sum, charge) => sum + charge.consumedKwh, 0)),
    },
  };
}
