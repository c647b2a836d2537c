// Data that moves with the sandbox clock (README decision 43): new charges appear, charges in progress complete and
// charge points change state as simulated hours pass, so an app's sync has something new to find and a test can
// predict what. Everything is a pure function of (the seed, the operator, the live setting, the number of whole hours
// since it was switched on): the same clock position gives the same records whatever the order of requests, and
// nothing is mutated or stored (only the setting is, store.ts).
//
// Time moves in whole hours ("slots") counted from the anchor: slot k covers [anchor + k h, anchor + (k + 1) h) and
// shows once it is over. So a test that moves the clock by n hours (plus the seconds it takes to run) sees exactly n
// slots; the wall clock adds one only after a real hour.
import { CHARGE_STOP_REASONS, CP_STATES, createPrng, DEFAULT_SEED, iso, pick, round } from "./seed.js";
import type { Charge, ChargePoint, OperatorData } from "./seed.js";

export const LIVE_SLOT_MS = 60 * 60 * 1000;
/** Live charges per operator at most; its id range holds more, but a sandbox left running for years should not grow without end. */
export const MAX_LIVE_CHARGES = 100_000;
/** The chance that a charge point changes state in a slot. */
const STATE_CHANGE_CHANCE = 0.08;
const MAX_CHARGE_MS = 4 * LIVE_SLOT_MS;

export interface LiveSetting {
  enabled: boolean;
  chargesPerHour: number;
  anchorMs: number;
}

/** Whole slots elapsed at `nowMs`: 0 when live data is off. */
export function slotsElapsed(setting: LiveSetting, nowMs: number): number {
  if (!setting.enabled || setting.chargesPerHour === 0) return 0;
  const slots = Math.max(0, Math.floor((nowMs - setting.anchorMs) / LIVE_SLOT_MS));
  return Math.min(slots, Math.floor(MAX_LIVE_CHARGES / setting.chargesPerHour));
}

/** A PRNG for one (operator, slot, item): random access into the stream, so no slot depends on another. */
function streamFor(operatorId: number, slot: number, item = 0): () => number {
  const mixed = DEFAULT_SEED ^ Math.imul(operatorId, 0x9e3779b1) ^ Math.imul(slot + 1, 0x85ebca6b) ^ Math.imul(item + 1, 0xc2b2ae35);
  return createPrng(mixed >>> 0);
}

interface PlannedCharge {
  id: number;
  chargePoint: ChargePoint;
  startedMs: number;
  endMs: number;
  totalKwh: number;
  startMeterKwh: number;
  type: Charge["type"];
  stopReason: string;
}

/** The charges of slot k, in id order (= start order). */
function planSlot(base: OperatorData, setting: LiveSetting, slot: number): PlannedCharge[] {
  if (base.chargePoints.length === 0) return [];
  const random = streamFor(base.operator.id, slot);
  const slotStart = setting.anchorMs + slot * LIVE_SLOT_MS;
  const offsets = Array.from({ length: setting.chargesPerHour }, () => Math.floor(random() * LIVE_SLOT_MS));
  offsets.sort((a, b) => a - b);
  return offsets.map((offset, j) => {
    const chargePoint = pick(random, base.chargePoints);
    const durationMs = 15 * 60 * 1000 + Math.floor(random() * (MAX_CHARGE_MS - 15 * 60 * 1000));
    const kw = Math.min(chargePoint.maxKw, 50) * (0.5 + random() * 0.4);
    return {
      id: base.profile.ids.liveCharge + slot * setting.chargesPerHour + j + 1,
      chargePoint,
      startedMs: slotStart + offset,
      endMs: slotStart + offset + durationMs,
      totalKwh: round((kw * durationMs) / LIVE_SLOT_MS, 3),
      startMeterKwh: round(100 + random() * 30_000, 3),
      type: pick(random, ["external", "external", "operator", "sponsored"] as const),
      stopReason: pick(random, CHARGE_STOP_REASONS),
    };
  });
}

/** A planned charge as the API shows it at `positionMs`: charging (energy so far) until it ends, then completed. */
function chargeAt(base: OperatorData, plan: PlannedCharge, positionMs: number): Charge {
  const finished = plan.endMs + 60_000 <= positionMs;
  const consumedKwh = finished ? plan.totalKwh : round((plan.totalKwh * (positionMs - plan.startedMs)) / (plan.endMs - plan.startedMs), 3);
  const price = round(consumedKwh * base.profile.pricePerKwh, 2);
  return {
    id: plan.id,
    chargePointId: plan.chargePoint.id,
    siteId: plan.chargePoint.siteId,
    state: finished ? "completed" : "charging",
    type: plan.type,
    consumedKwh,
    startMeterKwh: plan.startMeterKwh,
    endMeterKwh: finished ? round(plan.startMeterKwh + consumedKwh, 3) : null,
    startedAt: iso(plan.startedMs),
    stoppedAt: finished ? iso(plan.endMs) : null,
    completedAt: finished ? iso(plan.endMs + 60_000) : null,
    failedAt: null,
    price,
    cost: round(price * 0.62, 2),
    currency: base.profile.currency,
    stopReason: finished ? plan.stopReason : null,
    failureReason: null,
  };
}

/** The slot in which the charge point last changed state by itself (0: never since the anchor), and to what. */
function lastStateChange(operatorId: number, chargePoint: ChargePoint, slots: number): { slot: number; state: ChargePoint["state"] } | null {
  for (let slot = slots; slot >= 1; slot -= 1) {
    const random = streamFor(operatorId, slot, chargePoint.id);
    if (random() < STATE_CHANGE_CHANCE) return { slot, state: pick(random, CP_STATES) };
  }
  return null;
}

/**
 * The operator's charge points and charges after `slots` whole hours of live data: the seeded charges, then the new
 * ones in id order; a charge point with a charge in progress is busy-charging, and others change state now and then.
 * `updatedAt` of a charge point moves whenever its state does.
 */
export function withLiveData(base: OperatorData, setting: LiveSetting, slots: number): Pick<OperatorData, "chargePoints" | "charges"> {
  if (slots === 0) return { chargePoints: base.chargePoints, charges: base.charges };
  const positionMs = setting.anchorMs + slots * LIVE_SLOT_MS;
  const charges = [...base.charges];
  /** Per charge point: the latest start or stop of a live charge at or before the position, and whether one is in progress. */
  const activity = new Map<number, { lastMs: number; charging: boolean }>();
  for (let slot = 0; slot < slots; slot += 1) {
    for (const plan of planSlot(base, setting, slot)) {
      const charge = chargeAt(base, plan, positionMs);
      charges.push(charge);
      const seen = activity.get(plan.chargePoint.id) ?? { lastMs: 0, charging: false };
      const lastMs = charge.state === "charging" ? plan.startedMs : plan.endMs;
      activity.set(plan.chargePoint.id, { lastMs: Math.max(seen.lastMs, lastMs), charging: seen.charging || charge.state === "charging" });
    }
  }
  const chargePoints = base.chargePoints.map((cp) => {
    const change = lastStateChange(base.operator.id, cp, slots);
    const used = activity.get(cp.id);
    if (!change && !used) return cp;
    const state: ChargePoint["state"] = used?.charging ? "busy-charging" : (change?.state ?? cp.state);
    const changedMs = Math.max(Date.parse(cp.updatedAt), change ? setting.anchorMs + change.slot * LIVE_SLOT_MS : 0, used?.lastMs ?? 0);
    return {
      ...cp,
      state,
      cablePluggedIn: state.startsWith("busy"),
      isActive: state !== "passive",
      lastConnectedAt: used ? iso(used.lastMs) : cp.lastConnectedAt,
      updatedAt: iso(changedMs),
    };
  });
  return { chargePoints, charges };
}
