// Webhook hardening against the running app: a catalogue of bad deliveries (contract §6), each of
// which must be refused (zero accepted forgeries), none of which may cause a 500, and none of which
// may change anything. Then duplicates: 2,000 concurrent copies of one delivery have one effect.
// npm test: alone: 2,000 concurrent copies of one delivery, answered within the app's deadline: another file's
// load beside it would measure the machine, not the app (scripts/lib/test-lanes.ts).
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { machineLoad, postAtOnce } from "../helpers/burst";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

const HEADER = "X-Volt-Signature";
const enc = (s: string) => new TextEncoder().encode(s);
const now = () => Math.floor(Date.now() / 1000);

function envelope(overrides: Record<string, unknown> = {}) {
  return {
    id: `whd_${randomUUID()}`,
    type: "install.created",
    delivered_at: now(),
    data: { install_id: 7001, operator_id: 1001, slug: "northwind-charging" },
    ...overrides,
  };
}
const hmacHex = (body: Uint8Array | string, secret = stack.webhookSecret) => createHmac("sha256", secret).update(body).digest("hex");
const sign = (body: Uint8Array | string, secret?: string) => `sha256=${hmacHex(body, secret)}`;

type Case = { name: string; body: Uint8Array | string; headers: Record<string, string>; method?: string; expect: number };

function cases(): Case[] {
  const json = JSON.stringify(envelope());
  const bytes = enc(json);
  const good = sign(bytes);
  const flipped = Uint8Array.from(bytes);
  flipped[20] = flipped[20]! ^ 0x01;
  const signedEnvelope = (overrides: Record<string, unknown>) => {
    const body = JSON.stringify(envelope(overrides));
    return { body, headers: { [HEADER]: sign(body) } };
  };
  const signedRaw = (body: Uint8Array | string) => ({ body, headers: { [HEADER]: sign(body) } });
  const nonUtf8 = Uint8Array.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]);

  return [
    // The signature header itself: 401.
    { name: "no signature header", body: json, headers: {}, expect: 401 },
    { name: "empty header", body: json, headers: { [HEADER]: "" }, expect: 401 },
    { name: "prefix only", body: json, headers: { [HEADER]: "sha256=" }, expect: 401 },
    { name: "hex without prefix", body: json, headers: { [HEADER]: hmacHex(bytes) }, expect: 401 },
    { name: "sha1= prefix", body: json, headers: { [HEADER]: `sha1=${hmacHex(bytes)}` }, expect: 401 },
    { name: "upper-case prefix", body: json, headers: { [HEADER]: `SHA256=${hmacHex(bytes)}` }, expect: 401 },
    { name: "upper-case hex", body: json, headers: { [HEADER]: `sha256=${hmacHex(bytes).toUpperCase()}` }, expect: 401 },
    { name: "63 hex digits", body: json, headers: { [HEADER]: good.slice(0, -1) }, expect: 401 },
    { name: "65 hex digits", body: json, headers: { [HEADER]: `${good}a` }, expect: 401 },
    { name: "128 hex digits", body: json, headers: { [HEADER]: `${good}${hmacHex(bytes)}` }, expect: 401 },
    { name: "non-hex characters", body: json, headers: { [HEADER]: `sha256=${"z".repeat(64)}` }, expect: 401 },
    { name: "all zeros", body: json, headers: { [HEADER]: `sha256=${"0".repeat(64)}` }, expect: 401 },
    { name: "wrong secret", body: json, headers: { [HEADER]: sign(bytes, "a-secret-that-is-not-ours") }, expect: 401 },
    { name: "empty secret", body: json, headers: { [HEADER]: sign(bytes, "") }, expect: 401 },
    { name: "base64 digest instead of hex", body: json, headers: { [HEADER]: `sha256=${createHmac("sha256", stack.webhookSecret).update(bytes).digest("base64")}` }, expect: 401 },
    // (Whitespace around a header value is not part of it: HTTP strips it before the app sees it.)
    { name: "space after the prefix", body: json, headers: { [HEADER]: `sha256= ${hmacHex(bytes)}` }, expect: 401 },
    { name: "two signatures in one header", body: json, headers: { [HEADER]: `${good},${good}` }, expect: 401 },
    { name: "signature in another header", body: json, headers: { "X-Signature": good }, expect: 401 },
    // The body the signature covers: 401.
    { name: "one body byte flipped", body: flipped, headers: { [HEADER]: good }, expect: 401 },
    { name: "re-serialized JSON (pretty)", body: JSON.stringify(JSON.parse(json), null, 2), headers: { [HEADER]: good }, expect: 401 },
    { name: "re-serialized JSON (keys reordered)", body: JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(json) as object).reverse())), headers: { [HEADER]: good }, expect: 401 },
    { name: "trailing newline added", body: `${json}\n`, headers: { [HEADER]: good }, expect: 401 },
    { name: "leading whitespace added", body: ` ${json}`, headers: { [HEADER]: good }, expect: 401 },
    { name: "signature of an empty body", body: json, headers: { [HEADER]: sign("") }, expect: 401 },
    { name: "empty body, signed body elsewhere", body: "", headers: { [HEADER]: good }, expect: 401 },
    { name: "non-UTF-8 body, wrong signature", body: nonUtf8, headers: { [HEADER]: good }, expect: 401 },
    // Authentic but not acceptable: 400.
    { name: "stale delivered_at (1 hour ago)", ...signedEnvelope({ delivered_at: now() - 3600 }), expect: 400 },
    { name: "stale delivered_at (6 minutes ago)", ...signedEnvelope({ delivered_at: now() - 360 }), expect: 400 },
    { name: "future delivered_at (1 hour ahead)", ...signedEnvelope({ delivered_at: now() + 3600 }), expect: 400 },
    { name: "delivered_at missing", ...signedEnvelope({ delivered_at: undefined }), expect: 400 },
    { name: "delivered_at not a number", ...signedEnvelope({ delivered_at: "yesterday" }), expect: 400 },
    { name: "delivered_at beyond any date", ...signedEnvelope({ delivered_at: 9e15 }), expect: 400 },
    { name: "invalid JSON", ...signedRaw("{not json"), expect: 400 },
    { name: "non-UTF-8 body, valid signature", ...signedRaw(nonUtf8), expect: 400 },
    { name: "a JSON array", ...signedRaw("[1,2,3]"), expect: 400 },
    { name: "JSON null", ...signedRaw("null"), expect: 400 },
    { name: "type missing", ...signedEnvelope({ type: undefined }), expect: 400 },
    { name: "install_id as a string", ...signedEnvelope({ data: { install_id: "7001", operator_id: 1001, slug: "x" } }), expect: 400 },
    { name: "negative install_id", ...signedEnvelope({ data: { install_id: -1, operator_id: 1001, slug: "x" } }), expect: 400 },
    { name: "install_id beyond 32 bits", ...signedEnvelope({ data: { install_id: 8_345_690_002, operator_id: 1001, slug: "x" } }), expect: 400 },
    { name: "data not an object", ...signedEnvelope({ data: "install 7001" }), expect: 400 },
    // Size and method.
    { name: "oversized body", ...signedEnvelope({ padding: "x".repeat(300 * 1024) }), expect: 413 },
    { name: "GET", body: "", headers: {}, method: "GET", expect: 405 },
    { name: "PUT", body: json, headers: { [HEADER]: good }, method: "PUT", expect: 405 },
    { name: "DELETE", body: "", headers: {}, method: "DELETE", expect: 405 },
    { name: "PATCH", body: json, headers: { [HEADER]: good }, method: "PATCH", expect: 405 },
  ];
}

async function deliver(c: Pick<Case, "body" | "headers" | "method">) {
  return fetch(`${stack.appUrl}/api/webhooks`, {
    method: c.method ?? "POST",
    headers: { "Content-Type": "application/json", ...c.headers },
    body: c.method === "GET" || c.method === "DELETE" ? undefined : new Blob([c.body as BlobPart]),
  });
}

beforeEach(resetWorld);
afterAll(closeSql);

describe("bad webhook deliveries", () => {
  it(`${cases().length} bad inputs: zero accepted, zero 500s, nothing changed`, async () => {
    const all = cases();
    expect(all.length).toBeGreaterThanOrEqual(35);
    const outcomes: { name: string; status: number }[] = [];
    for (const c of all) outcomes.push({ name: c.name, status: (await deliver(c)).status });

    expect(outcomes.filter((o) => o.status >= 500)).toEqual([]);
    expect(outcomes.filter((o) => o.status < 300)).toEqual([]);
    expect(outcomes).toEqual(all.map((c) => ({ name: c.name, status: c.expect })));
    expect(await sql("SELECT id FROM installs")).toEqual([]);
    expect(await sql("SELECT id FROM install_events")).toEqual([]);
    // Authentic-but-unusable deliveries are kept for the audit trail; forgeries never are.
    const recorded = await sql<{ outcome: string }>("SELECT outcome FROM webhook_deliveries");
    expect(recorded.every((r) => r.outcome === "invalid")).toBe(true);
  });

  it("signed deliveries carrying text PostgreSQL refuses (a NUL, lone surrogates) are recorded with that text made safe", async () => {
    // JSON.stringify writes a lone surrogate as the escape "\ud800", as any sender's JSON would.
    const texts = ["a\u0000b", "a\ud800b", "a\udfffb", "\ud800"];
    for (const [i, slug] of texts.entries()) {
      const body = JSON.stringify(envelope({ data: { install_id: 7001 + i, operator_id: 1001 + i, slug, ["note\ud800"]: "x\u0000" } }));
      const response = await deliver({ body, headers: { [HEADER]: sign(body) } });
      expect({ slug, status: response.status, body: await response.json() }).toEqual({ slug, status: 200, body: { status: "processed" } });
    }
    expect(await sql("SELECT install_id, slug FROM installs ORDER BY install_id")).toEqual([
      { install_id: 7001, slug: "a\uFFFDb" },
      { install_id: 7002, slug: "a\uFFFDb" },
      { install_id: 7003, slug: "a\uFFFDb" },
      { install_id: 7004, slug: "\uFFFD" },
    ]);
    const recorded = await sql<{ outcome: string; note: string }>("SELECT outcome, payload->'data'->>'note\uFFFD' AS note FROM webhook_deliveries");
    expect(recorded).toEqual(texts.map(() => ({ outcome: "processed", note: "x\uFFFD" })));
  });

  it("an unknown event type is acknowledged, recorded and ignored", async () => {
    const body = JSON.stringify(envelope({ type: "install.renamed" }));
    const response = await deliver({ body, headers: { [HEADER]: sign(body) } });
    expect(response.status).toBe(200);
    expect(await sql("SELECT outcome, event_type FROM webhook_deliveries")).toEqual([{ outcome: "ignored", event_type: "install.renamed" }]);
    expect(await sql("SELECT id FROM installs")).toEqual([]);
  });

  it("an event type named after what every object inherits (toString, __proto__, constructor) is recorded and ignored too", async () => {
    const types = ["toString", "__proto__", "constructor", "hasOwnProperty"];
    for (const type of types) {
      const body = JSON.stringify(envelope({ type }));
      const response = await deliver({ body, headers: { [HEADER]: sign(body) } });
      expect({ type, status: response.status, body: await response.json() }).toEqual({ type, status: 200, body: { status: "ignored" } });
    }
    const recorded = await sql<{ outcome: string; event_type: string }>("SELECT outcome, event_type FROM webhook_deliveries");
    expect(recorded.map((r) => `${r.event_type} ${r.outcome}`).sort()).toEqual(types.map((type) => `${type} ignored`).sort());
    expect(await sql("SELECT id FROM installs")).toEqual([]);
  });
});

describe("duplicates and replays", () => {
  it("2,000 concurrent copies of one delivery have exactly one effect", { timeout: scaled(120_000) }, async () => {
    const body = JSON.stringify(envelope());
    const statuses = await postAtOnce(Array.from({ length: 2000 }, () => ({ url: `${stack.appUrl}/api/webhooks`, body, headers: { [HEADER]: sign(body) } })));
    // Each copy is answered 200 (recorded, or recognised as recorded) or 503 (refused before the
    // deadline, A201: on a busy machine the pool cannot take every copy in time); never anything else.
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length, `no copy answered 200 before the deadline (${machineLoad()})`).toBeGreaterThan(0);
    expect(await sql("SELECT install_id FROM installs")).toEqual([{ install_id: 7001 }]);
    expect(await sql("SELECT id FROM install_events")).toHaveLength(1);
    expect(await sql("SELECT id FROM webhook_deliveries")).toHaveLength(1);
  });

  it("the same delivery replayed later (freshly signed) is recognised by its id", async () => {
    const id = `whd_${randomUUID()}`;
    for (const offset of [0, 30]) {
      const body = JSON.stringify(envelope({ id, delivered_at: now() - offset }));
      expect((await deliver({ body, headers: { [HEADER]: sign(body) } })).status).toBe(200);
    }
    expect(await sql("SELECT id FROM webhook_deliveries")).toHaveLength(1);
  });
});
