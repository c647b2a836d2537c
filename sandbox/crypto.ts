// Small crypto helpers. Tokens, codes and tickets are random strings; the state file keeps only their sha256.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

// Random bytes come from a pool refilled 16 KB at a time: one randomBytes() call per token costs ~25 µs of system call,
// which is most of the time it takes to mint 20,000 tokens for bulk installs (decision 41). Same CSPRNG, fewer calls.
const POOL_SIZE = 16 * 1024;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** URL-safe random string with `bytes` bytes of entropy (from the OS CSPRNG). */
export function randomString(bytes = 32): string {
  if (bytes > POOL_SIZE) return randomBytes(bytes).toString("base64url");
  if (poolOffset + bytes > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const value = pool.subarray(poolOffset, poolOffset + bytes).toString("base64url");
  // Each byte is handed out once; overwrite it so the pool never holds a value that was already used.
  pool.fill(0, poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return value;
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
