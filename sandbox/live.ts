// Data that moves with the sandbox clock (README decision 43): new charges appear, charges in progress complete and
// charge points change state as simulated hours pass, so an app's sync has something new to find and a test can
// predict what. Everything is a pure function of (the seed, the operator, the live setting, the number of whole hours
// since it was switched on): the same clock position gives the same records whatever the order of requests, and
// nothing is mutated or stored (only the setting is, store.ts).
//
// Time moves in whole hours ("slots") counted from the anchor: slot k covers [anchor + k h, anchor + (k + 1) h) and
// shows once it is over. So a test that moves the clock by n hours (plus the seconds it takes to run) sees exactly n
// slots; the wall clock adds one only after a real hour.
//
// How many charges a slot brings follows a day's shape (README decision 59): few at night, a morning and an evening
// peak, by the slot's UTC hour, averaging `chargesPerHour` over a day. Moving the clock a day spreads that day's
// charges over its 24 hours as a charging network's day looks, not as one flat block.
import { CHARGE_STOP_REASONS, CP_STATES, createPrng, DEFAULT_SEED, iso, pick, round } from "./seed.js";
import type { Charge, ChargePoint, OperatorData } from "./seed.js";

export const LIVE_SLOT_MS = 60 * 60 * 1000;
/** Live charges per operator at most; its id range holds more, but a sandbox left running for years should not grow without end. */
export const MAX_LIVE_CHARGES = 100_000;
/** The chance that a charge point changes state in a slot. */
const STATE_CHANGE_CHANCE = 0.08;
const MAX_CHARGE_MS = 4 * LIVE_SLOT_MS;

/**
 * The relative number of charges started in each UTC hour of a day (public charging: quiet at night, a morning peak as
 * people arrive at work, a larger evening one as they come home). Normalised so the day's mean is 1.
 */
const HOURLY_SHAPE: readonly number[] = (() => {
  const raw = [0.2, 0.15, 0.1, 0.1, 0.15, 0.3, 0.6, 1.1, 1.6, 1.5, 1.2, 1.2, 1.3, 1.2, 1.1, 1.2, 1.5, 1.8, 1.7, 1.4, 1.0, 0.7, 0.5, 0.3];
  const mean = raw.reduce((a, b) => a + b, 0) / raw.length;
  return raw.map((w) => w / mean);
})();

/** Ids reserved per slot: more than any slot can bring, so ids stay in start order whatever each slot's count. */
function idsPerSlot(setting: LiveSetting): number {
  return Math.ceil(setting.chargesPerHour * Math.max(...HOURLY_SHAPE)) + 1;
}

/**
 * How many charges slot k brings: `chargesPerHour` times the shape of the slot's UTC hour, the fraction rounded up or
 * down by the slot's own PRNG (so a rate of 2 still gives 0 at 3 am on some nights and 1 on others). Exported so a test
 * can predict counts without knowing at which hour of the day the anchor fell.
 */
export function chargesInSlot(operatorId: number, setting: LiveSetting, slot: number): number {
  const hour = new Date(setting.anchorMs + slot * LIVE_SLOT_MS).getUTCHours();
  const expected = setting.chargesPerHour * HOURLY_SHAPE[hour]!;
  const whole = Math.floor(expected);
  return whole + (streamFor(operatorId, slot, -1)() < expected - whole ? 1 : 0);
}

/** The number of live charges after `slots` slots (the sum of chargesInSlot). */
export function liveChargeCount(operatorId: number, setting: LiveSetting, slots: number): number {
  let total = 0;
  for (let slot = 0; slot < slots; slot += 1) total += chargesInSlot(operatorId, setting, slot);
  return total;
}

export interface LiveSetting {
  enabled: boolean;
  chargesPerHour: number;
  anchorMs: number;
}

/** Whole slots elapsed at `nowMs`: 0 when live data is off. */
export function slotsElapsed(setting: LiveSetting, nowMs: number): number {
  if (!setting.enabled || setting.chargesPerHour === 0) return 0;
  const slots = Math.max(0, Math.floor((nowMs - setting.anchorMs) / LIVE_SLOT_MS));
  // The bound on live charges, counted at the busiest hour's rate so it holds whatever the shape gives.
  return Math.min(slots, Math.floor(MAX_LIVE_CHARGES / (idsPerSlot(setting) - 1)));
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
  const offsets = Array.from({ length: chargesInSlot(base.operator.id, setting, slot) }, () => Math.floor(random() * LIVE_SLOT_MS));
  offsets.sort((a, b) => a - b);
  return offsets.map((offset, j) => {
    const chargePoint = pick(random, base.chargePoints);
    const durationMs = 15 * 60 * 1000 + Math.floor(random() * (MAX_CHARGE_MS - 15 * 60 * 1000));
    const kw = Math.min(chargePoint.maxKw, 50) * (0.5 + random() * 0.4);
    return {
      id: base.profile.ids.liveCharge + slot * idsPerSlot(setting) + j + 1,
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
  // Shown completed a minute after it ends; in that minute it reads its total, never more (the energy
  // so far is capped at the end: a reading past it would exceed the completed charge's own total).
  const consumedKwh = finished ? plan.totalKwh : round((plan.totalKwh * (Math.min(positionMs, plan.endMs) - plan.startedMs)) / (plan.endMs - plan.startedMs), 3);
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
