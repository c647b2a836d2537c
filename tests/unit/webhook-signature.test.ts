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
