// Webhook signature verification (contract §6 "Signature verification"): the one place it happens.
//
//   X-<Service>-Signature: sha256=<hex HMAC-SHA256 of the raw body bytes, keyed by webhook_secret>
//
// It works on the raw bytes exactly as received: never on a re-serialized object, never on text
// (decoding to a string could alter bytes that are not valid UTF-8).
import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The header's brand word is the service's (contract §6 replaces it with <Service>); the local
 * sandbox uses "Volt". Change it here when pointing the app at the real service (docs/spec-gaps.md).
 */
export const WEBHOOK_SIGNATURE_HEADER = "x-volt-signature";

const SIGNATURE_FORMAT = /^sha256=([0-9a-f]{64})$/;

export function computeWebhookSignature(rawBody: Uint8Array, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`;
}

/**
 * True when `header` is a valid signature of `rawBody` under one of `secrets` (the current
 * secret, and the previous one while a rotation is under way). The format is checked first, so
 * the constant-time comparison always compares two 32-byte digests.
 */
export function verifyWebhookSignature(rawBody: Uint8Array, header: string | null | undefined, secrets: readonly string[]): boolean {
  const match = typeof header === "string" ? SIGNATURE_FORMAT.exec(header) : null;
  if (!match?.[1]) return false;
  const received = Buffer.from(match[1], "hex");
  let valid = false;
  for (const secret of secrets) {
    if (!secret) continue;
    const expected = createHmac("sha256", secret).update(rawBody).digest();
    // Check every secret (no early exit), so timing does not reveal which one matched.
    valid = (expected.length === received.length && timingSafeEqual(expected, received)) || valid;
  }
  return valid;
}
