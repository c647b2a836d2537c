// What a black-box conformance run (conformance/, docs/conformance.md) reads from the sandbox beyond its other
// controls (README decisions 57 and 58): whose refused token an API call presented, a 429's RateLimit-ResetsIn in
// the event log, deliveries the service would never send (forged, unsigned, stale, future-dated, oversize), and a
// captured delivery sent again byte for byte.
import { createHmac } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import {
  WEBHOOK_SECRET,
  callApi,
  control,
  controlRaw,
  events,
  installAndRedeem,
  refreshTokens,
  resetSandbox,
  setUpTestSandbox,
  type TokenSet,
} from "./helpers";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env, { webhooks: true }));

const sign = (body: Buffer | string) => `sha256=${createHmac("sha256", WEBHOOK_SECRET).update(body).digest("hex")}`;

async function installId(): Promise<number> {
  const { installs } = await control<{ installs: { install_id: number; status: string }[] }>(env, "GET", "/installs");
  return installs.find((i) => i.status === "active")!.install_id;
}

describe("API events name a refused token's install (decision 57)", () => {
  it("a token deleted by an uninstall, and one revoked by a refresh, are named with their install and state", async () => {
    const first = await installAndRedeem(env, 1001);
    const id = await installId();
    const refreshed = (await (await refreshTokens(env, first.refresh_token)).json()) as TokenSet;
    expect((await callApi(env, "/charge-points", first.access_token)).status).toBe(401);
    await control(env, "POST", `/installs/${id}/revoke`);
    expect((await callApi(env, "/charge-points", refreshed.access_token)).status).toBe(401);
    expect((await callApi(env, "/charge-points", "volt_at_never-issued")).status).toBe(401);

    const refusals = (await events(env, "?type=api")).filter((e) => e.detail.status === 401).map((e) => e.detail);
    expect(refusals).toEqual([
      expect.objectContaining({ install_id: null, token_install_id: id, token_state: "revoked" }),
      expect.objectContaining({ install_id: null, token_install_id: id, token_state: "deleted" }),
      expect.not.objectContaining({ token_install_id: expect.anything() }),
    ]);
  });

  it("a 429 names its RateLimit-ResetsIn", async () => {
    const tokens = await installAndRedeem(env, 1001);
    await control(env, "PUT", `/installs/${await installId()}/rate-limit`, { limit: 1, windowSeconds: 30 });
    await callApi(env, "/charge-points", tokens.access_token);
    const refused = await callApi(env, "/charge-points", tokens.access_token);
    expect(refused.status).toBe(429);
    const last = (await events(env, "?type=api")).at(-1)!;
    expect(last.detail).toMatchObject({ status: 429, resets_in: Number(refused.headers.get("RateLimit-ResetsIn")) });
    expect(last.detail.resets_in).toBeGreaterThan(0);
  });
});

describe("crafted deliveries (decision 58)", () => {
  const data = { install_id: 7, operator_id: 1001, slug: "northwind-charging" };

  it("valid, forged and missing signatures, stale and future delivered_at, and padding, as asked; none is kept", async () => {
    const craft = (body: Record<string, unknown>) => control<{ delivery_id: string; attempts: { status: number }[] }>(env, "POST", "/webhooks/craft", { type: "install.revoked", data, ...body });
    const sent = [
      await craft({}),
      await craft({ signature: "forged" }),
      await craft({ signature: "missing" }),
      await craft({ deliveredAtOffsetSeconds: -3600 }),
      await craft({ deliveredAtOffsetSeconds: 3600 }),
      await craft({ padBytes: 100_000 }),
    ];
    expect(sent.map((s) => s.attempts[0]!.status)).toEqual(Array(6).fill(204));
    const received = env.webhooks.received;
    expect(received).toHaveLength(6);
    const signatureOk = received.map((r) => r.headers["x-volt-signature"] === sign(r.rawBody));
    expect(signatureOk).toEqual([true, false, false, true, true, true]);
    expect(received[2]!.headers["x-volt-signature"]).toBeUndefined();
    const now = Math.floor(Date.now() / 1000);
    const deliveredAt = received.map((r) => (JSON.parse(r.rawBody.toString()) as { delivered_at: number }).delivered_at - now);
    expect(deliveredAt[3]).toBeLessThanOrEqual(-3599);
    expect(deliveredAt[4]).toBeGreaterThanOrEqual(3599);
    expect(received[5]!.rawBody.length).toBeGreaterThan(100_000);

    const logged = (await events(env, "?type=webhook")).map((e) => e.detail.crafted);
    expect(logged).toEqual(["valid", "forged", "missing", "stale", "future", "oversize"]);
    expect((await controlRaw(env, "GET", `/deliveries/${sent[0]!.delivery_id}`)).status).toBe(404);
  });

  it("refuses a malformed request with 400 and sends nothing", async () => {
    expect((await controlRaw(env, "POST", "/webhooks/craft", { type: "install.revoked", data, signature: "maybe" })).status).toBe(400);
    expect((await controlRaw(env, "POST", "/webhooks/craft", { type: "install.revoked", data, padBytes: 9 * 1024 * 1024 })).status).toBe(400);
    expect(env.webhooks.received).toHaveLength(0);
  });

  it("a captured delivery is sent again with the very bytes and signature of its original attempt", async () => {
    await installAndRedeem(env, 1001);
    const id = await installId();
    await control(env, "POST", `/installs/${id}/revoke`);
    const { deliveries } = await control<{ deliveries: { detail: { delivery_id: string; event_type: string } }[] }>(env, "GET", "/deliveries?event_type=install.revoked");
    const deliveryId = deliveries[0]!.detail.delivery_id;
    const before = env.webhooks.received.length;
    const resent = await control<{ attempts: { kind: string; status: number }[] }>(env, "POST", `/deliveries/${deliveryId}/resend-captured`);
    expect(resent.attempts).toEqual([expect.objectContaining({ kind: "duplicate", status: 204 })]);
    const original = env.webhooks.received[before - 1]!;
    const again = env.webhooks.received[before]!;
    expect(again.rawBody.equals(original.rawBody)).toBe(true);
    expect(again.headers["x-volt-signature"]).toBe(original.headers["x-volt-signature"]);
    expect((await controlRaw(env, "POST", "/deliveries/whd_unknown/resend-captured")).status).toBe(404);
  });
});
