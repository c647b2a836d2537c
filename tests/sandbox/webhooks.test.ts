// Signed webhooks: the signature covers the exact raw body, delivered_at is inside it, failures never block.
import { createHmac, timingSafeEqual } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { WEBHOOK_SECRET, advanceClock, connectAndApprove, control, resetSandbox, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox({ webhookTimeoutMs: 300 });
beforeEach(() => resetSandbox(env, { webhooks: true }));

/** What an app must do: HMAC-SHA256 of the raw bytes, hex, "sha256=" prefix, constant-time compare. */
function verify(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`);
  const given = Buffer.from(header ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe("install.created", () => {
  it("is signed over the raw body with X-Volt-Signature: sha256=<hex>", async () => {
    await connectAndApprove(env, 1001);
    expect(env.webhooks.received).toHaveLength(1);
    const [delivery] = env.webhooks.received;
    if (!delivery) throw new Error("no delivery");
    expect(delivery.headers["content-type"]).toBe("application/json");
    const header = delivery.headers["x-volt-signature"];
    expect(typeof header === "string" ? header : "").toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verify(delivery.rawBody, typeof header === "string" ? header : undefined, WEBHOOK_SECRET)).toBe(true);
    expect(verify(delivery.rawBody, typeof header === "string" ? header : undefined, "another-secret")).toBe(false);
    // Re-serializing is not the same bytes: a verifier must use the raw body.
    const tampered = Buffer.from(delivery.rawBody.toString("utf8").replace(/"install_id":\s*1\b/, '"install_id": 2'));
    expect(tampered.equals(delivery.rawBody)).toBe(false);
    expect(verify(tampered, typeof header === "string" ? header : undefined, WEBHOOK_SECRET)).toBe(false);
  });

  it("carries the envelope id/type/delivered_at/data with install_id, operator_id and slug", async () => {
    await advanceClock(env, 1000);
    const before = Math.floor(Date.now() / 1000);
    await connectAndApprove(env, 1003);
    const body = JSON.parse(env.webhooks.received[0]?.rawBody.toString("utf8") ?? "{}") as Record<string, unknown>;
    expect(body).toEqual({
      id: expect.stringMatching(/^whd_[A-Za-z0-9_-]+$/),
      type: "install.created",
      delivered_at: expect.any(Number),
      data: { install_id: 1, operator_id: 1003, slug: "alpenstrom-mobility" },
    });
    // delivered_at is integer epoch seconds on the wall clock, not the sandbox clock that moved
    // 1000 s ahead (README decision 30): moving the clock must not make deliveries stale.
    expect(Number.isInteger(body.delivered_at)).toBe(true);
    expect(body.delivered_at).toBeGreaterThanOrEqual(before - 1);
    expect(body.delivered_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
    expect(body.delivered_at).toBeLessThanOrEqual(before + 5);
  });

  it("a failing or slow receiver is logged and does not block the redirect; nothing is retried", async () => {
    env.webhooks.respondWith.status = 500;
    const first = await connectAndApprove(env, 1001);
    expect(first.code).toMatch(/^volt_ac_/);
    env.webhooks.respondWith.status = 204;
    env.webhooks.respondWith.delayMs = 1000; // longer than this sandbox's 300 ms deadline
    const second = await connectAndApprove(env, 1002);
    expect(second.code).toMatch(/^volt_ac_/);
    const { deliveries } = await control<{ deliveries: { detail: Record<string, unknown> }[] }>(env, "GET", "/deliveries");
    expect(deliveries.map((d) => [d.detail.install_id, d.detail.status, d.detail.outcome])).toEqual([
      [1, 500, "failed"],
      [2, null, "failed"],
    ]);
    expect(String(deliveries[1]?.detail.error)).toContain("no answer within 300 ms");
    expect(typeof deliveries[0]?.detail.latency_ms).toBe("number");
    expect(env.webhooks.received).toHaveLength(2);
  });
});
