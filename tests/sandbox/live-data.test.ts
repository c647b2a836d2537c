// Data that moves with the clock (README decision 43): with live data on, every simulated hour brings each operator
// new charges (ids after the seed's, started within that hour), charges in progress complete, and charge points change
// state. A pure function of the seed, the setting and the clock position: same position, same data.
import { beforeEach, describe, expect, it } from "vitest";
import type { LiveSetting } from "../../sandbox/live.js";
import { LIVE_SLOT_MS, chargesInSlot, liveChargeCount, withLiveData } from "../../sandbox/live.js";
import { buildSeed } from "../../sandbox/seed.js";
import { MINIMAL_SANDBOX_ENV, advanceClock, callApi, control, controlRaw, installAndRedeem, resetSandbox, setUpTestSandbox } from "./helpers.js";

type Charge = { id: number; state: string; startedAt: string; stoppedAt: string | null; completedAt: string | null; consumedKwh: number; chargePointId: number };
type ChargePoint = { id: number; state: string; updatedAt: string };
type LiveView = { enabled: boolean; chargesPerHour: number; anchor: string; slotsElapsed: number; configured: { enabled: boolean; chargesPerHour: number } };

const HOUR = 3600;
const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

const charges = async (operatorId: number) => (await control<{ total: number; data: Charge[] }>(env, "GET", `/operators/${operatorId}/charges`)).data;
const chargePoints = async (operatorId: number) => (await control<{ data: ChargePoint[] }>(env, "GET", `/operators/${operatorId}/charge-points`)).data;

describe("live data off (the default of the test sandboxes)", () => {
  it("moving the clock changes nothing: counts stay exact", async () => {
    expect(await control<LiveView>(env, "GET", "/live-data")).toMatchObject({ enabled: false, slotsElapsed: 0, configured: { enabled: false } });
    const before = await charges(1001);
    await advanceClock(env, 48 * HOUR);
    expect(await charges(1001)).toEqual(before);
    expect(before).toHaveLength(36);
  });
});

describe("live data on", () => {
  it("each simulated hour brings new charges per operator, as many as the day's shape gives that hour, with ids after the seed's, started in that hour", async () => {
    const on = await control<LiveView>(env, "POST", "/live-data", { enabled: true, chargesPerHour: 3 });
    expect(on).toMatchObject({ enabled: true, chargesPerHour: 3, slotsElapsed: 0 });
    const setting: LiveSetting = { enabled: true, chargesPerHour: 3, anchorMs: Date.parse(on.anchor) };
    const seeded = await charges(1002);
    await advanceClock(env, 30 * 60);
    expect(await charges(1002)).toEqual(seeded); // an hour shows once it is over
    await advanceClock(env, 30 * 60 + 5 * HOUR);
    expect((await control<LiveView>(env, "GET", "/live-data")).slotsElapsed).toBe(6);
    const now = await charges(1002);
    const perSlot = Array.from({ length: 6 }, (_, slot) => chargesInSlot(1002, setting, slot));
    expect(now).toHaveLength(14 + perSlot.reduce((a, b) => a + b, 0));
    expect(now.slice(0, 14).map((c) => c.id)).toEqual(seeded.map((c) => c.id));
    const fresh = now.slice(14);
    const ids = fresh.map((c) => c.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids[0]!).toBeGreaterThan(seeded.at(-1)!.id);
    const anchor = Date.parse(on.anchor);
    let index = 0;
    perSlot.forEach((count, slot) => {
      for (const charge of fresh.slice(index, index + count)) {
        const started = Date.parse(charge.startedAt);
        expect(started).toBeGreaterThanOrEqual(anchor + slot * LIVE_SLOT_MS);
        expect(started).toBeLessThan(anchor + (slot + 1) * LIVE_SLOT_MS);
      }
      index += count;
    });
    // Every operator gets its own: the large one too.
    expect((await control<{ total: number }>(env, "GET", "/operators/2001/charges")).total).toBe(20_000 + liveChargeCount(2001, setting, 6));
  });

  it("a day moved at once is spread over its 24 hours with a day's shape: quiet at night, busy morning and evening, chargesPerHour on average", async () => {
    const on = await control<LiveView>(env, "POST", "/live-data", { enabled: true, chargesPerHour: 4 });
    await advanceClock(env, 7 * 24 * HOUR + 60);
    const anchor = Date.parse(on.anchor);
    const fresh = (await charges(1001)).slice(36);
    // Seven days at 4 an hour on average: 672, give or take the rounding of each hour.
    expect(fresh.length).toBeGreaterThan(7 * 24 * 4 * 0.9);
    expect(fresh.length).toBeLessThan(7 * 24 * 4 * 1.1);
    // Every hour that passed has its own charges, none in a burst: no hour holds more than twice the average.
    const perHour = new Map<number, number>();
    for (const c of fresh) {
      const slot = Math.floor((Date.parse(c.startedAt) - anchor) / LIVE_SLOT_MS);
      perHour.set(slot, (perHour.get(slot) ?? 0) + 1);
    }
    expect(Math.max(...perHour.values())).toBeLessThanOrEqual(2 * 4);
    const byUtcHour = Array.from({ length: 24 }, () => 0);
    for (const c of fresh) byUtcHour[new Date(c.startedAt).getUTCHours()]! += 1;
    const night = byUtcHour.slice(1, 5).reduce((a, b) => a + b, 0); // 01:00-04:59
    const evening = byUtcHour.slice(16, 20).reduce((a, b) => a + b, 0); // 16:00-19:59
    expect(evening).toBeGreaterThan(5 * night);
    // Each UTC day the clock passed through whole has a share of the week, not all on one day.
    const perDay = new Map<string, number>();
    for (const c of fresh) perDay.set(c.startedAt.slice(0, 10), (perDay.get(c.startedAt.slice(0, 10)) ?? 0) + 1);
    expect(perDay.size).toBeGreaterThanOrEqual(7);
    expect(Math.max(...perDay.values())).toBeLessThan(fresh.length / 3);
  });

  it("the API lists what the control API lists, page after page; the same position gives the same data", async () => {
    await control(env, "POST", "/live-data", { enabled: true });
    await advanceClock(env, 10 * HOUR + 60);
    const tokens = await installAndRedeem(env, 1001);
    const expected = await charges(1001);
    const { anchor: anchorAt } = await control<LiveView>(env, "GET", "/live-data");
    expect(expected).toHaveLength(36 + liveChargeCount(1001, { enabled: true, chargesPerHour: 2, anchorMs: Date.parse(anchorAt) }, 10));
    // Pages read backwards, then the whole list again: the order of requests makes no difference. How
    // many pages there are depends on the hour the test runs at (the day's shape), so it is counted.
    const pages: Charge[][] = [];
    for (let page = Math.ceil(expected.length / 10); page >= 0; page -= 1) {
      pages[page] = ((await (await callApi(env, `/charges?page=${page}&perPage=10`, tokens.access_token)).json()) as { data: Charge[] }).data;
    }
    expect(pages.flat()).toEqual(expected);
    expect(await charges(1001)).toEqual(expected);
    // And it is a pure function of (seed, setting, slots): the same as building it directly.
    const { anchor } = await control<LiveView>(env, "GET", "/live-data");
    const setting: LiveSetting = { enabled: true, chargesPerHour: 2, anchorMs: Date.parse(anchor) };
    expect(withLiveData(buildSeed().operators[0]!, setting, 10).charges).toEqual(expected);
  });

  it("charges in progress complete as hours pass, and charge points change state with a new updatedAt", async () => {
    await control(env, "POST", "/live-data", { enabled: true, chargesPerHour: 6 });
    await advanceClock(env, 2 * HOUR + 60);
    const early = await charges(1003);
    const running = early.slice(52).filter((c) => c.state === "charging"); // after the seed's 52
    expect(running.length).toBeGreaterThan(0);
    expect(running.every((c) => c.stoppedAt === null && c.completedAt === null)).toBe(true);
    const pointsEarly = await chargePoints(1003);
    const busy = pointsEarly.filter((cp) => running.some((c) => c.chargePointId === cp.id));
    expect(busy.every((cp) => cp.state === "busy-charging")).toBe(true);

    await advanceClock(env, 6 * HOUR);
    const later = new Map((await charges(1003)).map((c) => [c.id, c]));
    for (const charge of running) {
      const now = later.get(charge.id)!;
      expect(now.state).toBe("completed");
      expect(now.consumedKwh).toBeGreaterThanOrEqual(charge.consumedKwh);
      expect(Date.parse(now.completedAt!)).toBeGreaterThan(Date.parse(now.startedAt));
    }
    const pointsLater = await chargePoints(1003);
    const changed = pointsLater.filter((cp, i) => cp.state !== pointsEarly[i]!.state);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.every((cp) => Date.parse(cp.updatedAt) > Date.parse(pointsEarly.find((p) => p.id === cp.id)!.updatedAt))).toBe(true);
  });

  it("survives a restart at the same position; switching off goes back to the seed; reset goes back to the configured setting", async () => {
    await control(env, "POST", "/live-data", { enabled: true });
    await advanceClock(env, 3 * HOUR + 30);
    const before = await charges(1001);
    await env.restart();
    expect(await charges(1001)).toEqual(before);
    await control(env, "POST", "/live-data", { enabled: false });
    expect(await charges(1001)).toHaveLength(36);
    await control(env, "POST", "/live-data", { enabled: true });
    expect(await charges(1001)).toHaveLength(36); // anchored now: nothing until an hour passes
    await resetSandbox(env);
    expect(await control<LiveView>(env, "GET", "/live-data")).toMatchObject({ enabled: false });
  });

  it.each([
    [{}, /Expected \{"enabled": true \| false/],
    [{ enabled: "yes" }, /Expected/],
    [{ enabled: true, chargesPerHour: 0 }, /Expected/],
    [{ enabled: true, chargesPerHour: 1001 }, /Expected/],
    [{ enabled: true, extra: 1 }, /Expected/],
  ])("answers %j with 400", async (body, message) => {
    const response = await controlRaw(env, "POST", "/live-data", body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(message);
  });
});

describe("SANDBOX_LIVE_DATA in the environment", () => {
  const base = MINIMAL_SANDBOX_ENV;

  it("defaults to on with 2 charges an hour; off and other rates are accepted; anything else is refused", async () => {
    const { loadConfig } = await import("../../sandbox/config.js");
    expect(loadConfig(base).liveData).toEqual({ enabled: true, chargesPerHour: 2 });
    expect(loadConfig({ ...base, SANDBOX_LIVE_DATA: "off", SANDBOX_LIVE_CHARGES_PER_HOUR: "10" }).liveData).toEqual({ enabled: false, chargesPerHour: 10 });
    expect(() => loadConfig({ ...base, SANDBOX_LIVE_DATA: "yes" })).toThrow(/SANDBOX_LIVE_DATA: must be "on" or "off"/);
    expect(() => loadConfig({ ...base, SANDBOX_LIVE_CHARGES_PER_HOUR: "0" })).toThrow(/SANDBOX_LIVE_CHARGES_PER_HOUR/);
  });
});
