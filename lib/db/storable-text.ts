// Text PostgreSQL refuses, made safe: one rule for everything the app stores from outside (a synced
// record, a webhook's body). A NUL is allowed in neither text nor jsonb, and a lone UTF-16 surrogate
// (JSON.stringify writes it as `\udXXX`) is refused by jsonb: either fails the whole statement it is in.
// Each such character becomes U+FFFD (the replacement character, what a UTF-8 decoder shows for bytes
// it cannot read), in values and in object keys; everything else is kept as sent.
import "server-only";

// A NUL, a high surrogate not followed by a low one, or a low one not after a high one. By hand: the
// String methods that do the surrogate half (isWellFormed, toWellFormed) are ES2024, past this
// project's TypeScript lib.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** One string made storable. */
export const storableString = (text: string): string => text.replace(UNSTORABLE, "\ufffd");

/** A parsed JSON value with every string made storable, and whether any was changed (the value itself when none was). */
export function storableJson<T>(value: T): { value: T; cleaned: boolean } {
  let cleaned = false;
  const safe = (text: string) => {
    const out = storableString(text);
    if (out !== text) cleaned = true;
    return out;
  };
  const walk = (inner: unknown): unknown => {
    if (typeof inner === "string") return safe(inner);
    if (Array.isArray(inner)) return inner.map(walk);
    if (inner !== null && typeof inner === "object") return Object.fromEntries(Object.entries(inner).map(([key, v]) => [safe(key), walk(v)]));
    return inner;
  };
  const result = walk(value) as T;
  return cleaned ? { value: result, cleaned } : { value, cleaned };
}
