import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { TokenDecryptionError, openToken, sealToken, sealedKeyId } from "@/lib/oauth/token-crypto";

const k1 = { id: "k1", key: randomBytes(32) };
const k2 = { id: "k2", key: randomBytes(32) };
const token = "volt_at_example-access-token";

describe("token encryption at rest", () => {
  it("round-trips and never contains the clear text", () => {
    const sealed = sealToken(token, "install-a", [k1]);
    expect(sealed).not.toContain(token);
    expect(sealed).not.toContain("volt_");
    expect(sealed.startsWith("v1.k1.")).toBe(true);
    expect(openToken(sealed, "install-a", [k1])).toBe(token);
  });

  it("uses a fresh nonce each time", () => {
    expect(sealToken(token, "install-a", [k1])).not.toBe(sealToken(token, "install-a", [k1]));
  });

  it("refuses a ciphertext moved to another install (associated data)", () => {
    const sealed = sealToken(token, "install-a", [k1]);
    expect(() => openToken(sealed, "install-b", [k1])).toThrow(TokenDecryptionError);
  });

  it("refuses tampered ciphertext", () => {
    const parts = sealToken(token, "install-a", [k1]).split(".");
    const body = Buffer.from(parts[3]!, "base64url");
    body[0] = body[0]! ^ 1;
    parts[3] = body.toString("base64url");
    expect(() => openToken(parts.join("."), "install-a", [k1])).toThrow(TokenDecryptionError);
  });

  it("seals with the first key and still opens values sealed with an older one", () => {
    const old = sealToken(token, "install-a", [k1]);
    const rotated = [k2, k1];
    expect(openToken(old, "install-a", rotated)).toBe(token);
    expect(sealedKeyId(sealToken(token, "install-a", rotated))).toBe("k2");
  });

  it("names a missing key instead of failing obscurely", () => {
    const sealed = sealToken(token, "install-a", [k2]);
    expect(() => openToken(sealed, "install-a", [k1])).toThrow(/key "k2" is not configured/);
  });
});
