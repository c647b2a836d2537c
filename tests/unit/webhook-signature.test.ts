import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { computeWebhookSignature, verifyWebhookSignature } from "@/lib/webhooks/signature";

const secret = "whsec-test-0123456789abcdef";
const body = new TextEncoder().encode('{"id":"whd_1","type":"install.created","delivered_at":1700000000,"data":{}}');
const sign = (bytes: Uint8Array, key = secret) => `sha256=${createHmac("sha256", key).update(bytes).digest("hex")}`;

describe("verifyWebhookSignature", () => {
  it("passes GitHub's published sha256= example (known answer)", () => {
    // https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
    const payload = new TextEncoder().encode("Hello, World!");
    const header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    expect(verifyWebhookSignature(payload, header, ["It's a Secret to Everybody"])).toBe(true);
    expect(computeWebhookSignature(payload, "It's a Secret to Everybody")).toBe(header);
  });

  it("accepts the right signature over the raw bytes", () => {
    expect(verifyWebhookSignature(body, sign(body), [secret])).toBe(true);
  });

  it("accepts the previous secret during a rotation", () => {
    expect(verifyWebhookSignature(body, sign(body, "previous-secret-0123"), [secret, "previous-secret-0123"])).toBe(true);
  });

  const bad: [string, string | null][] = [
    ["no header", null],
    ["empty header", ""],
    ["no prefix", sign(body).slice("sha256=".length)],
    ["wrong prefix", sign(body).replace("sha256=", "sha1=")],
    ["upper-case hex", `sha256=${sign(body).slice(7).toUpperCase()}`],
    ["63 hex digits", sign(body).slice(0, -1)],
    ["65 hex digits", `${sign(body)}0`],
    ["wrong secret", sign(body, "another-secret-entirely")],
    ["whitespace around", ` ${sign(body)} `],
  ];
  it.each(bad)("rejects %s", (_name, header) => {
    expect(verifyWebhookSignature(body, header, [secret])).toBe(false);
  });

  it("rejects a body with one byte flipped", () => {
    const flipped = Uint8Array.from(body);
    flipped[10] = flipped[10]! ^ 1;
    expect(verifyWebhookSignature(flipped, sign(body), [secret])).toBe(false);
  });

  it("rejects re-serialized JSON and a trailing newline", () => {
    const reserialized = new TextEncoder().encode(JSON.stringify(JSON.parse(new TextDecoder().decode(body)), null, 2));
    const withNewline = new TextEncoder().encode(new TextDecoder().decode(body) + "\n");
    expect(verifyWebhookSignature(reserialized, sign(body), [secret])).toBe(false);
    expect(verifyWebhookSignature(withNewline, sign(body), [secret])).toBe(false);
  });

  it("verifies bytes that are not valid UTF-8 exactly as received", () => {
    const binary = Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(verifyWebhookSignature(binary, sign(binary), [secret])).toBe(true);
  });
});

// README "Gotchas": the mistake receivers keep making is to verify the signature over
// `JSON.stringify(await request.json())` instead of the bytes that arrived. The two agree only when
// the sender happened to serialize exactly as JSON.stringify does; any other spacing, escaping or
// number format, and any int64 id above 2^53 (public-facts.md: ids are int64), breaks the parsed
// copy while the raw bytes still verify. app/api/webhooks/route.ts reads the bytes (lib/http/read-body.ts).
describe("the re-serialization pitfall: raw bytes verify, JSON.stringify(await request.json()) does not", () => {
  const bodies: [string, string][] = [
    ["pretty-printed, as many servers write it", '{\n  "id": "whd_2",\n  "type": "install.created",\n  "delivered_at": 1700000000,\n  "data": {}\n}'],
    ["a non-ASCII name sent escaped", '{"id":"whd_3","type":"install.created","delivered_at":1700000000,"data":{"slug":"z\\u00fcrich-charging"}}'],
    ["an int64 id above 2^53", '{"id":"whd_4","type":"install.created","delivered_at":1700000000,"data":{"operator_id":9007199254740993}}'],
    ["a number written another way", '{"id":"whd_5","type":"install.created","delivered_at":1.7e9,"data":{}}'],
  ];

  const deliveryOf = (raw: string) =>
    new Request("https://partner.example/api/webhooks", { method: "POST", headers: { "content-type": "application/json" }, body: raw });

  it.each(bodies)("%s", async (_name, raw) => {
    const header = sign(new TextEncoder().encode(raw));

    const right = new Uint8Array(await deliveryOf(raw).arrayBuffer());
    expect(verifyWebhookSignature(right, header, [secret])).toBe(true);

    const wrong = new TextEncoder().encode(JSON.stringify(await deliveryOf(raw).json()));
    expect(verifyWebhookSignature(wrong, header, [secret])).toBe(false);
  });

  it("with a compact body the mistake goes unnoticed, which is why it reaches production", async () => {
    const raw = new TextDecoder().decode(body);
    const reserialized = new TextEncoder().encode(JSON.stringify(await deliveryOf(raw).json()));
    expect(verifyWebhookSignature(reserialized, sign(body), [secret])).toBe(true);
  });
});
