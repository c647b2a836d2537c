// Issue 4, the sandbox side: all three events (install.config.updated from the portal's configuration form),
// the delivery log and its page, replay on request, and delivery modes (drop, late, twice).
import { createHmac } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import {
  WEBHOOK_SECRET,
  advanceClock,
  control,
  controlRaw,
  installAndRedeem,
  postForm,
  receivedEnvelopes,
  resetSandbox,
  setUpTestSandbox,
  type EventEntry,
} from "./helpers.js";

const env = setUpTestSandbox({ webhookTimeoutMs: 500 });
beforeEach(() => resetSandbox(env, { webhooks: true }));

function signatureOk(index: number): boolean {
  const delivery = env.webhooks.received[index];
  if (!delivery) return false;
  const expected = `sha256=${createHmac("sha256", WEBHOOK_SECRET).update(delivery.rawBody).digest("hex")}`;
  return delivery.headers["x-volt-signature"] === expected;
}

async function deliveries(query = ""): Promise<EventEntry[]> {
  return (await control<{ deliveries: EventEntry[] }>(env, "GET", `/deliveries${query}`)).deliveries;
}

function nowOnSandbox(offsetSeconds: number): number {
  return Math.floor(Date.now() / 1000) + offsetSeconds;
}

describe("install.config.updated", () => {
  it("a new install starts with a default configuration: all sites, sync on, the operator's currency", async () => {
    await installAndRedeem(env, 1002);
    const { installs } = await control<{ installs: { config: unknown }[] }>(env, "GET", "/installs");
    expect(installs[0]?.config).toEqual({ siteIds: [], syncCharges: true, currency: "NOK" });
  });

  it("saving the catalogue page's form stores the configuration and sends a signed install.config.updated", async () => {
    await installAndRedeem(env, 1001);
    const page = await (await fetch(`${env.url}/portal/operators/1001`)).text();
    expect(page).toContain('action="/portal/operators/1001/config"');
    const siteIds = [...page.matchAll(/name="siteIds" value="(\d+)"/g)].map((m) => Number(m[1]));
    expect(siteIds.length).toBeGreaterThan(1);

    const body = new URLSearchParams([["install_id", "1"], ["siteIds", String(siteIds[0])], ["siteIds", String(siteIds[1])], ["currency", "CHF"]]);
    const saved = await fetch(`${env.url}/portal/operators/1001/config`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString(),
      redirect: "manual",
    });
    expect(saved.status).toBe(303);
    const location = saved.headers.get("location") ?? "";
    expect(location).toMatch(/^\/portal\/operators\/1001\?saved=whd_/);

    const last = receivedEnvelopes(env).at(-1);
    expect(last).toEqual({
      id: expect.stringMatching(/^whd_/),
      type: "install.config.updated",
      delivered_at: expect.any(Number),
      data: { install_id: 1, operator_id: 1001, config: { siteIds: [siteIds[0], siteIds[1]], syncCharges: false, currency: "CHF" } },
    });
    expect(signatureOk(env.webhooks.received.length - 1)).toBe(true);
    expect(location).toContain(last?.id ?? "none");

    const after = await (await fetch(`${env.url}${location}`)).text();
    expect(after).toContain("Configuration saved");
    expect(after).toMatch(/<option value="CHF" selected>/);
    const { installs } = await control<{ installs: { config: unknown }[] }>(env, "GET", "/installs");
    expect(installs[0]?.config).toEqual({ siteIds: [siteIds[0], siteIds[1]], syncCharges: false, currency: "CHF" });
  });

  it("the control API changes only the given settings and sends the whole configuration", async () => {
    await installAndRedeem(env, 1001);
    const result = await control<{ delivery: { delivery_id: string; ok: boolean; attempts: { status: number }[] } }>(env, "POST", "/installs/1/config", { currency: "GBP" });
    expect(result.delivery).toMatchObject({ ok: true, attempts: [{ status: 204 }] });
    expect(receivedEnvelopes(env).at(-1)?.data).toEqual({ install_id: 1, operator_id: 1001, config: { siteIds: [], syncCharges: true, currency: "GBP" } });
  });

  it.each([
    ["an unknown setting", { colour: "blue" }, 400],
    ["an unknown currency", { currency: "USD" }, 400],
    ["repeated site ids", { siteIds: [1001001, 1001001] }, 400],
    ["a site of another operator", { siteIds: [1002001] }, 400],
  ])("refuses %s", async (_label, body, status) => {
    await installAndRedeem(env, 1001);
    const before = env.webhooks.received.length;
    expect((await controlRaw(env, "POST", "/installs/1/config", body)).status).toBe(status);
    expect(env.webhooks.received.length).toBe(before);
  });

  it("answers 404 for a revoked install", async () => {
    await installAndRedeem(env, 1001);
    await control(env, "POST", "/installs/1/revoke");
    expect((await controlRaw(env, "POST", "/installs/1/config", { currency: "EUR" })).status).toBe(404);
  });
});

describe("the delivery log", () => {
  it("records every attempt with delivery id, kind, mode, delivered_at, status, latency and outcome", async () => {
    await installAndRedeem(env, 1001);
    env.webhooks.respondWith.status = 500;
    await control(env, "POST", "/installs/1/revoke");
    const log = await deliveries();
    expect(log.map((d) => d.detail)).toEqual([
      expect.objectContaining({ event_type: "install.created", install_id: 1, operator_id: 1001, kind: "original", mode: null, status: 204, error: null, outcome: "delivered" }),
      expect.objectContaining({ event_type: "install.revoked", install_id: 1, kind: "original", mode: null, status: 500, error: "non-2xx response (500)", outcome: "failed" }),
    ]);
    for (const entry of log) {
      expect(entry.detail.delivery_id).toMatch(/^whd_/);
      expect(typeof entry.detail.latency_ms).toBe("number");
      expect(typeof entry.detail.delivered_at).toBe("number");
    }
    expect(log[1]?.detail.delivery_id).toBe(receivedEnvelopes(env)[1]?.id);
  });

  it("filters by install_id and event_type, and shows one delivery with its attempts", async () => {
    await installAndRedeem(env, 1001);
    await installAndRedeem(env, 1002);
    await control(env, "POST", "/installs/2/revoke");
    expect((await deliveries("?install_id=2")).map((d) => d.detail.event_type)).toEqual(["install.created", "install.revoked"]);
    expect((await deliveries("?event_type=install.created")).map((d) => d.detail.install_id)).toEqual([1, 2]);
    expect((await controlRaw(env, "GET", "/deliveries?event_type=install.exploded")).status).toBe(400);

    const id = String((await deliveries("?install_id=1"))[0]?.detail.delivery_id);
    const one = await control<{ delivery: { id: string; type: string; data: unknown }; attempts: EventEntry[] }>(env, "GET", `/deliveries/${id}`);
    expect(one.delivery).toMatchObject({ id, type: "install.created", data: { install_id: 1, operator_id: 1001, slug: "northwind-charging" } });
    expect(one.attempts).toHaveLength(1);
    expect((await controlRaw(env, "GET", "/deliveries/whd_nope")).status).toBe(404);
  });

  it("the page /portal/deliveries shows the log as a table, newest first, with a Replay button per row", async () => {
    await installAndRedeem(env, 1001);
    env.webhooks.respondWith.status = 503;
    await control(env, "POST", "/installs/1/revoke");
    const response = await fetch(`${env.url}/portal/deliveries`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("Volt sandbox · webhook deliveries");
    expect(html).toContain('<table class="events" aria-label="Webhook deliveries">');
    const rows = [...html.matchAll(/<tr data-delivery-id="(whd_[^"]+)" data-outcome="(\w+)">/g)].map((m) => m[2]);
    expect(rows).toEqual(["failed", "delivered"]);
    expect(html).toContain("HTTP 503");
    expect(html).toContain("non-2xx response (503)");
    expect(html.match(/>Replay<\/button>/g)).toHaveLength(2);

    const filtered = await (await fetch(`${env.url}/portal/deliveries?install_id=99`)).text();
    expect(filtered).toContain("No deliveries yet.");
  });
});

describe("replay (the service operator's action, on request)", () => {
  it("re-sends the same id and data with a new delivered_at, freshly signed, and logs it as a replay", async () => {
    env.webhooks.respondWith.status = 500; // the app was down when install.created went out
    await installAndRedeem(env, 1001);
    env.webhooks.respondWith.status = 204;
    const original = receivedEnvelopes(env)[0];
    await advanceClock(env, 3600);

    const replay = await control<{ delivery_id: string; ok: boolean; attempts: { kind: string; delivered_at: number; status: number }[] }>(
      env,
      "POST",
      `/deliveries/${original?.id}/replay`,
    );
    expect(replay).toMatchObject({ delivery_id: original?.id, ok: true, attempts: [{ kind: "replay", status: 204 }] });
    const replayed = receivedEnvelopes(env)[1];
    expect(replayed?.id).toBe(original?.id);
    expect(replayed?.type).toBe("install.created");
    expect(replayed?.data).toEqual(original?.data);
    // A new delivered_at: now on the wall clock (README decision 30), whatever the sandbox clock says,
    // so the replay is fresh for the receiver even though the sandbox clock moved an hour.
    expect(replayed?.delivered_at).toBeGreaterThanOrEqual(original?.delivered_at ?? Infinity);
    expect(Math.abs((replayed?.delivered_at ?? 0) - nowOnSandbox(0))).toBeLessThanOrEqual(2);
    expect(signatureOk(1)).toBe(true);
    expect((await deliveries()).map((d) => [d.detail.delivery_id, d.detail.kind, d.detail.outcome])).toEqual([
      [original?.id, "original", "failed"],
      [original?.id, "replay", "delivered"],
    ]);
  });

  it("a dropped delivery can be replayed; an unknown id is a 404", async () => {
    await control(env, "POST", "/webhook-modes", { type: "install.created", mode: "drop" });
    await installAndRedeem(env, 1001);
    expect(env.webhooks.received).toHaveLength(0);
    const id = String((await deliveries())[0]?.detail.delivery_id);
    await control(env, "POST", `/deliveries/${id}/replay`);
    expect(receivedEnvelopes(env).map((w) => [w.id, w.type])).toEqual([[id, "install.created"]]);
    expect((await controlRaw(env, "POST", "/deliveries/whd_unknown/replay")).status).toBe(404);
  });

  it("many deliveries replayed on request are sent all at once, as a burst", async () => {
    for (const operatorId of [1001, 1002, 1003]) await installAndRedeem(env, operatorId);
    const ids = (await deliveries()).map((d) => String(d.detail.delivery_id));
    expect(ids).toHaveLength(3);
    env.webhooks.respondWith.delayMs = 400; // each answer takes 400 ms: one after another would take 1.2 s
    const started = Date.now();
    const result = await control(env, "POST", "/deliveries/replay", { ids });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(result).toEqual({ replayed: 3, delivered: 3, failed: 0, statuses: { "204": 3 } });
    expect(receivedEnvelopes(env).slice(3).map((w) => w.id).sort()).toEqual([...ids].sort());
    expect((await deliveries()).filter((d) => d.detail.kind === "replay")).toHaveLength(3);
  });

  it("a kept-alive connection the app resets when it is reused is not a failed delivery: it is sent again on a new one", async () => {
    await installAndRedeem(env, 1001);
    const id = String((await deliveries())[0]?.detail.delivery_id);
    env.webhooks.respondWith.resetReused = true; // the connection the first delivery used is reset at its next request
    const result = await control(env, "POST", "/deliveries/replay", { ids: [id] });
    expect(result).toEqual({ replayed: 1, delivered: 1, failed: 0, statuses: { "204": 1 } });
    expect(env.webhooks.received).toHaveLength(2);
  });

  it("a burst replay with an unknown id sends nothing; a malformed request is a 400", async () => {
    await installAndRedeem(env, 1001);
    const id = String((await deliveries())[0]?.detail.delivery_id);
    const unknown = await controlRaw(env, "POST", "/deliveries/replay", { ids: [id, "whd_unknown"] });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ unknown: ["whd_unknown"] });
    expect(env.webhooks.received).toHaveLength(1);
    for (const body of [{}, { ids: [] }, { ids: ["not-a-delivery-id"] }, { ids: [id], extra: true }]) {
      expect((await controlRaw(env, "POST", "/deliveries/replay", body)).status).toBe(400);
    }
  });

  it("the page's Replay button replays and comes back to the log", async () => {
    await installAndRedeem(env, 1001);
    const id = String((await deliveries())[0]?.detail.delivery_id);
    const response = await postForm(`${env.url}/portal/deliveries/${id}/replay`, {});
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/portal/deliveries?replayed=${id}`);
    expect(env.webhooks.received).toHaveLength(2);
    expect(await (await fetch(`${env.url}/portal/deliveries?replayed=${id}`)).text()).toContain(`Replayed ${id}`);
  });
});

describe("delivery modes (POST /_sandbox/webhook-modes)", () => {
  it("drop: the next delivery of the type is not sent, only logged as dropped; the one after is sent", async () => {
    await installAndRedeem(env, 1001);
    await installAndRedeem(env, 1002);
    await control(env, "POST", "/webhook-modes", { type: "install.revoked", mode: "drop" });
    await control(env, "POST", "/installs/1/revoke");
    await control(env, "POST", "/installs/2/revoke");
    expect(receivedEnvelopes(env).map((w) => [w.type, w.data.install_id])).toEqual([
      ["install.created", 1],
      ["install.created", 2],
      ["install.revoked", 2],
    ]);
    const dropped = (await deliveries("?event_type=install.revoked"))[0]?.detail;
    expect(dropped).toMatchObject({ install_id: 1, mode: "drop", outcome: "dropped", status: null, latency_ms: null });
    // The install is revoked all the same: the app must find out by reconciling.
    expect((await control<{ installs: { status: string }[] }>(env, "GET", "/installs")).installs[0]?.status).toBe("revoked");
  });

  it("late: sent now with delivered_at = now − lateSeconds (default 600)", async () => {
    await control(env, "POST", "/webhook-modes", { type: "install.created", mode: "late" });
    await control(env, "POST", "/webhook-modes", { type: "install.created", mode: "late", lateSeconds: 7200 });
    await installAndRedeem(env, 1001);
    await installAndRedeem(env, 1002);
    await installAndRedeem(env, 1003);
    const [first, second, third] = receivedEnvelopes(env);
    const now = nowOnSandbox(0);
    expect(now - (first?.delivered_at ?? 0)).toBeGreaterThanOrEqual(599);
    expect(now - (first?.delivered_at ?? 0)).toBeLessThanOrEqual(605);
    expect(now - (second?.delivered_at ?? 0)).toBeGreaterThanOrEqual(7199);
    expect(now - (third?.delivered_at ?? 0)).toBeLessThanOrEqual(5);
    expect([0, 1, 2].map(signatureOk)).toEqual([true, true, true]);
    expect((await deliveries()).map((d) => d.detail.mode)).toEqual(["late", "late", null]);
  });

  it("twice: the very same bytes and signature arrive twice, logged as original and duplicate", async () => {
    await control(env, "POST", "/webhook-modes", { type: "install.created", mode: "twice" });
    await installAndRedeem(env, 1001);
    expect(env.webhooks.received).toHaveLength(2);
    const [a, b] = env.webhooks.received;
    expect(a?.rawBody.equals(b?.rawBody ?? Buffer.alloc(0))).toBe(true);
    expect(a?.headers["x-volt-signature"]).toBe(b?.headers["x-volt-signature"]);
    expect((await deliveries()).map((d) => [d.detail.kind, d.detail.mode, d.detail.outcome])).toEqual([
      ["original", "twice", "delivered"],
      ["duplicate", "twice", "delivered"],
    ]);
  });

  it("count N applies to the next N deliveries of that type only; GET lists, DELETE clears", async () => {
    await control(env, "POST", "/webhook-modes", { type: "install.created", mode: "drop", count: 2 });
    const listed = await control<{ modes: unknown[] }>(env, "GET", "/webhook-modes");
    expect(listed.modes).toEqual([{ type: "install.created", mode: "drop", remaining: 2, lateSeconds: null }]);
    await installAndRedeem(env, 1001);
    await control(env, "POST", "/installs/1/revoke"); // another type: unaffected
    await installAndRedeem(env, 1002);
    await installAndRedeem(env, 1003);
    expect(receivedEnvelopes(env).map((w) => [w.type, w.data.install_id])).toEqual([
      ["install.revoked", 1],
      ["install.created", 3],
    ]);
    await control(env, "POST", "/webhook-modes", { type: "install.revoked", mode: "drop", count: 5 });
    expect(await control(env, "DELETE", "/webhook-modes")).toEqual({ modes: [] });
    await control(env, "POST", "/installs/2/revoke");
    expect(receivedEnvelopes(env).at(-1)).toMatchObject({ type: "install.revoked", data: { install_id: 2 } });
  });

  it.each([
    [{ type: "install.created" }],
    [{ type: "install.deleted", mode: "drop" }],
    [{ type: "install.created", mode: "drop", lateSeconds: 60 }],
    [{ type: "install.created", mode: "late", count: 0 }],
    [{ type: "install.created", mode: "twice", extra: 1 }],
  ])("rejects %j with 400", async (body) => {
    expect((await controlRaw(env, "POST", "/webhook-modes", body)).status).toBe(400);
  });
});

// Decision 53: the body's bytes are not what JSON.stringify makes of it, so a receiver that verifies a
// re-serialized body (the README's Gotchas) fails against the sandbox at once.
describe("the body's bytes", () => {
  it("are pretty-printed JSON: the signature matches the bytes sent, not JSON.stringify of the parsed body", async () => {
    await installAndRedeem(env, 1001);
    const delivery = env.webhooks.received[0]!;
    const raw = delivery.rawBody.toString("utf8");
    expect(raw).toContain('\n  "type": "install.created"');
    expect(signatureOk(0)).toBe(true);

    const reserialized = JSON.stringify(JSON.parse(raw));
    expect(reserialized).not.toBe(raw);
    const overReserialized = `sha256=${createHmac("sha256", WEBHOOK_SECRET).update(reserialized).digest("hex")}`;
    expect(delivery.headers["x-volt-signature"]).not.toBe(overReserialized);
  });
});
