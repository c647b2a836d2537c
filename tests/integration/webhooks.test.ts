// POST /api/webhooks against the running app and database.
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, control, installViaPortal, resetWorld, sandboxEvents, sql, stack } from "../helpers/stack";

const HEADER = "X-Volt-Signature";

function envelope(overrides: Record<string, unknown> = {}) {
  return {
    id: `whd_${randomUUID()}`,
    type: "install.created",
    delivered_at: Math.floor(Date.now() / 1000),
    data: { install_id: 9001, operator_id: 1002, slug: "harbor-ev" },
    ...overrides,
  };
}

function sign(body: string | Uint8Array, secret = stack.webhookSecret) {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

function deliver(body: string, headers: Record<string, string> = {}, method = "POST") {
  return fetch(`${stack.appUrl}/api/webhooks`, {
    method,
    headers: { "Content-Type": "application/json", ...headers },
    body: method === "GET" ? undefined : body,
  });
}

async function counts() {
  const [row] = await sql<{ installs: number; deliveries: number }>(
    "SELECT (SELECT count(*)::int FROM installs) AS installs, (SELECT count(*)::int FROM webhook_deliveries) AS deliveries",
  );
  return row!;
}

beforeEach(resetWorld);
afterAll(closeSql);

describe("POST /api/webhooks", () => {
  it("records a signed install.created as an install", async () => {
    const body = JSON.stringify(envelope());
    const response = await deliver(body, { [HEADER]: sign(body) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "processed" });
    const installs = await sql<{ install_id: number; operator_id: string; slug: string; status: string }>(
      "SELECT install_id, operator_id, slug, status FROM installs",
    );
    expect(installs).toEqual([{ install_id: 9001, operator_id: "1002", slug: "harbor-ev", status: "ACTIVE" }]);
  });

  it("answers 401 to a bad signature and changes nothing", async () => {
    const body = JSON.stringify(envelope());
    const response = await deliver(body, { [HEADER]: sign(body, "not-the-webhook-secret") });
    expect(response.status).toBe(401);
    expect(await counts()).toEqual({ installs: 0, deliveries: 0 });
  });

  it("answers 401 without a signature, and for a signature of other bytes", async () => {
    const body = JSON.stringify(envelope());
    expect((await deliver(body)).status).toBe(401);
    expect((await deliver(body, { [HEADER]: sign(`${body}\n`) })).status).toBe(401);
    expect((await deliver(body, { [HEADER]: sign(body).slice(0, -1) })).status).toBe(401);
    expect(await counts()).toEqual({ installs: 0, deliveries: 0 });
  });

  it("has one effect when install.created is delivered twice", async () => {
    const body = JSON.stringify(envelope());
    const first = await deliver(body, { [HEADER]: sign(body) });
    const second = await deliver(body, { [HEADER]: sign(body) });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ status: "duplicate" });
    expect(await counts()).toEqual({ installs: 1, deliveries: 1 });
    const events = await sql("SELECT * FROM install_events");
    expect(events).toHaveLength(1);
  });

  it("has one effect for the same install announced by two different deliveries", async () => {
    for (const id of ["whd_a", "whd_b"]) {
      const body = JSON.stringify(envelope({ id }));
      expect((await deliver(body, { [HEADER]: sign(body) })).status).toBe(200);
    }
    expect(await counts()).toEqual({ installs: 1, deliveries: 2 });
  });

  it("refuses a stale delivered_at even with a valid signature", async () => {
    const body = JSON.stringify(envelope({ delivered_at: Math.floor(Date.now() / 1000) - 3600 }));
    const response = await deliver(body, { [HEADER]: sign(body) });
    expect(response.status).toBe(400);
    expect(await counts()).toEqual({ installs: 0, deliveries: 0 });
  });
});

// The sandbox signs delivered_at with the wall clock; its own clock only fast-forwards lifetimes
// (sandbox README decision 30). A stale delivery is asked for with the `late` mode.
describe("delivered_at from the sandbox", () => {
  async function revokeThroughSandbox(installId: number) {
    await control("POST", `/installs/${installId}/revoke`);
    const [attempt] = (await sandboxEvents("webhook")).filter((e) => e.detail.event_type === "install.revoked");
    return attempt!.detail;
  }
  const installStatus = async (installId: number) =>
    (await sql<{ status: string }>("SELECT status FROM installs WHERE install_id = $1", [installId]))[0]?.status;

  it("moving the sandbox clock an hour does not make its deliveries stale", async () => {
    const install = await installViaPortal(1001);
    await control("POST", "/clock/advance", { seconds: 3600 });
    expect(await revokeThroughSandbox(install.installId)).toMatchObject({ outcome: "delivered", status: 200 });
    expect(await installStatus(install.installId)).toBe("REVOKED");
  });

  it("a delivery the sandbox sends late (mode late) is refused as stale and recorded nowhere", async () => {
    const install = await installViaPortal(1001);
    await control("POST", "/webhook-modes", { type: "install.revoked", mode: "late", lateSeconds: 3600 });
    expect(await revokeThroughSandbox(install.installId)).toMatchObject({ mode: "late", outcome: "failed", status: 400 });
    expect(await installStatus(install.installId)).toBe("ACTIVE");
    expect(await sql("SELECT id FROM webhook_deliveries WHERE event_type = 'install.revoked'")).toEqual([]);
  });
});

describe("POST /api/webhooks, continued", () => {
  it("answers 400 to signed invalid JSON and records it", async () => {
    const body = "{not json";
    const response = await deliver(body, { [HEADER]: sign(body) });
    expect(response.status).toBe(400);
    expect(await sql("SELECT outcome FROM webhook_deliveries")).toEqual([{ outcome: "invalid" }]);
  });

  it("acknowledges and records an unknown event type without acting on it", async () => {
    const body = JSON.stringify(envelope({ type: "install.renamed" }));
    const response = await deliver(body, { [HEADER]: sign(body) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ignored" });
    expect(await counts()).toEqual({ installs: 0, deliveries: 1 });
  });

  it("answers 413 to an oversized body and 405 to other methods", async () => {
    const big = JSON.stringify(envelope({ padding: "x".repeat(300 * 1024) }));
    expect((await deliver(big, { [HEADER]: sign(big) })).status).toBe(413);
    expect((await deliver("", {}, "GET")).status).toBe(405);
    expect((await deliver("{}", {}, "PUT")).status).toBe(405);
  });

  it("install.revoked before install.created: the install ends revoked, and stays so", async () => {
    const revoked = JSON.stringify(envelope({ type: "install.revoked" }));
    const created = JSON.stringify(envelope());
    expect((await deliver(revoked, { [HEADER]: sign(revoked) })).status).toBe(200);
    expect((await deliver(created, { [HEADER]: sign(created) })).status).toBe(200);
    expect(await sql("SELECT install_id, status FROM installs")).toEqual([{ install_id: 9001, status: "REVOKED" }]);
  });

  it("install.revoked twice is harmless", async () => {
    const created = JSON.stringify(envelope());
    await deliver(created, { [HEADER]: sign(created) });
    for (let i = 0; i < 2; i++) {
      const revoked = JSON.stringify(envelope({ type: "install.revoked" }));
      expect((await deliver(revoked, { [HEADER]: sign(revoked) })).status).toBe(200);
    }
    expect(await sql("SELECT status FROM installs")).toEqual([{ status: "REVOKED" }]);
    expect(await sql("SELECT to_status FROM install_events ORDER BY occurred_at")).toEqual([{ to_status: "ACTIVE" }, { to_status: "REVOKED" }]);
  });

  it("a re-install supersedes the old install; a late install.revoked for the old one leaves the new one alone", async () => {
    for (const installId of [9001, 9002]) {
      const body = JSON.stringify(envelope({ data: { install_id: installId, operator_id: 1002, slug: "harbor-ev" } }));
      expect((await deliver(body, { [HEADER]: sign(body) })).status).toBe(200);
    }
    const late = JSON.stringify(envelope({ type: "install.revoked", data: { install_id: 9001, operator_id: 1002 } }));
    expect((await deliver(late, { [HEADER]: sign(late) })).status).toBe(200);
    expect(await sql("SELECT install_id, status FROM installs ORDER BY install_id")).toEqual([
      { install_id: 9001, status: "REVOKED" },
      { install_id: 9002, status: "ACTIVE" },
    ]);
  });

  it("accepts the previous secret while a rotation is under way, and no other", async () => {
    const previous = process.env.WEBHOOK_PREVIOUS_SECRET!;
    const body = JSON.stringify(envelope());
    expect((await deliver(body, { [HEADER]: sign(body, previous) })).status).toBe(200);
    const other = JSON.stringify(envelope({ data: { install_id: 9002, operator_id: 1003, slug: "x" } }));
    expect((await deliver(other, { [HEADER]: sign(other, `${previous}x`) })).status).toBe(401);
    expect(await sql("SELECT install_id FROM installs")).toEqual([{ install_id: 9001 }]);
  });
});
