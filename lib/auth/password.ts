// Staff passwords: scrypt hashes in one self-describing string,
//
//   scrypt.<N>.<r>.<p>.<salt, base64url>.<key, base64url>
//
// The parameters travel with each hash, so they can be raised later without invalidating older
// hashes. The format has no `$` (Next.js's .env loader expands `$NAME`), no `=` and no `,` (the
// separators of STAFF_USERS), so a hash can be pasted into any .env or secret store as it is.
//
// Not marked server-only: the `staff:password` script and the local .env generator hash with it
// too. It holds no secret; the hashes it makes are the secret.
import { randomBytes, scrypt, scryptSync, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { KEY_BYTES, SALT_BYTES, parsePasswordHash, type ParsedHash, type ScryptParams } from "../config/password-hash";

// The format's parser lives in the base layer (the configuration check reads hashes too); it is
// re-exported so that everything about passwords can still be imported from here.
export { parsePasswordHash, type ScryptParams } from "../config/password-hash";

/**
 * OWASP's Password Storage Cheat Sheet lists N=2^15, r=8, p=3 as one of its equivalent scrypt
 * settings. It needs 32 MiB per hash (128·N·r) instead of the 128 MiB of N=2^17, p=1, so a burst
 * of sign-in attempts cannot exhaust the server's memory; p buys the time back.
 */
export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { N: 2 ** 15, r: 8, p: 3 };

function scryptOptions({ N, r, p }: ScryptParams): ScryptOptions {
  // Node refuses anything above `maxmem` (32 MiB by default, which N=2^15, r=8 just exceeds).
  return { N, r, p, maxmem: 2 * 128 * N * r };
}

/**
 * Hashes a password with a new random salt. Synchronous: it runs only in scripts (the
 * `staff:password` command and the local .env generator), never while serving a request.
 */
export function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): string {
  const salt = randomBytes(SALT_BYTES);
  const key = scryptSync(password.normalize("NFC"), salt, KEY_BYTES, scryptOptions(params));
  const encoded = `scrypt.${params.N}.${params.r}.${params.p}.${salt.toString("base64url")}.${key.toString("base64url")}`;
  // Refuse to hand out a hash this module would not accept back (e.g. parameters out of range).
  if (!parsePasswordHash(encoded)) throw new Error("scrypt parameters are outside the accepted range");
  return encoded;
}

function deriveKey(password: string, parsed: ParsedHash): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), parsed.salt, parsed.key.length, scryptOptions(parsed.params), (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * Whether `password` matches `encoded`. A malformed hash never matches (and never throws). The
 * comparison takes the same time wherever the keys differ (timingSafeEqual), and the key
 * derivation runs on libuv's thread pool, so the event loop keeps serving other requests.
 */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parsePasswordHash(encoded);
  if (!parsed) return false;
  const derived = await deriveKey(password, parsed);
  return timingSafeEqual(derived, parsed.key);
}

/**
 * A hash that no password matches (its key is random, not derived), with the same parameters as
 * `like` (or the defaults). Verifying against it costs what a real verification costs: the sign-in
 * uses it for unknown emails, so the answer's timing does not tell which emails have accounts.
 */
export function unmatchableHashLike(like?: string): string {
  const params = (like && parsePasswordHash(like)?.params) || DEFAULT_SCRYPT_PARAMS;
  return `scrypt.${params.N}.${params.r}.${params.p}.${randomBytes(SALT_BYTES).toString("base64url")}.${randomBytes(KEY_BYTES).toString("base64url")}`;
}
