// Small crypto helpers. Tokens, codes and tickets are random strings; the state file keeps only their sha256.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** URL-safe random string with `bytes` bytes of entropy. */
export function randomString(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

export function hmacSha256Hex(secret: string, payload: Buffer | string): string {
  return createHmac("sha256", secret).update(payload).digest("hex");
}

/**
 * Constant-time string comparison. Both sides are hashed first so that the comparison
 * does not leak the length of the secret either.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash("sha256").update(a, "utf8").digest();
  const right = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(left, right);
}
