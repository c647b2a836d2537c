// The format of a staff password hash, and its parser: one self-describing string,
//
//   scrypt.<N>.<r>.<p>.<salt, base64url>.<key, base64url>
//
// Apart from lib/auth/password.ts (which hashes and verifies) because reading the format is all the
// configuration check needs: lib/env.ts checks every STAFF_USERS hash at start-up, and the base layer
// it belongs to imports nothing of the domain (.dependency-cruiser.mjs). Pure: no key derivation here.

export type ScryptParams = { N: number; r: number; p: number };

/** The salt and key lengths the app makes; shorter ones read from configuration are refused. */
export const SALT_BYTES = 16;
export const KEY_BYTES = 32;

// Limits for hashes read from configuration: a typo must not make each sign-in take a minute or
// a gigabyte.
const MIN_N = 2 ** 14;
const MAX_MEMORY_BYTES = 256 * 1024 * 1024;
const MAX_P = 16;

export type ParsedHash = { params: ScryptParams; salt: Buffer; key: Buffer };

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const INTEGER = /^[1-9][0-9]{0,9}$/;

/** The hash's parts, or null when it is not a well-formed hash within the limits above. */
export function parsePasswordHash(encoded: string): ParsedHash | null {
  const parts = encoded.split(".");
  if (parts.length !== 6 || parts[0] !== "scrypt") return null;
  const [, nText, rText, pText, saltText, keyText] = parts as [string, string, string, string, string, string];
  if (![nText, rText, pText].every((n) => INTEGER.test(n))) return null;
  if (!BASE64URL.test(saltText) || !BASE64URL.test(keyText)) return null;
  const params = { N: Number(nText), r: Number(rText), p: Number(pText) };
  const powerOfTwo = (params.N & (params.N - 1)) === 0;
  if (!powerOfTwo || params.N < MIN_N || params.p > MAX_P || 128 * params.N * params.r > MAX_MEMORY_BYTES) return null;
  const salt = Buffer.from(saltText, "base64url");
  const key = Buffer.from(keyText, "base64url");
  if (salt.length < SALT_BYTES || key.length < KEY_BYTES || key.length > 64) return null;
  return { params, salt, key };
}
