// Structured logging with pino. Every module logs through `logger` (or a child of it).
//
// Secrets must never reach a log line. Two layers make sure of that:
//  1. `redact` blanks the fields that can hold one (tokens, codes, secrets, authorization headers);
//  2. `scrubSecrets` replaces anything shaped like an OAuth token or code in any string, in case a
//     token ends up inside a message or an error text from a library.
import "server-only";
import pino from "pino";
import { PRODUCT } from "@/lib/config/product";
import { logLevel } from "@/lib/env";

const SECRET_KEYS = [
  "access_token",
  "refresh_token",
  "accessToken",
  "refreshToken",
  "code",
  "client_secret",
  "clientSecret",
  "password",
  "authorization",
  "cookie",
  "secret",
];

// Opaque service tokens carry a `<brand>_at_`, `<brand>_rt_` or `<brand>_ac_` prefix (contract §2).
const TOKEN_PATTERN = /\b[a-z][a-z0-9]*_(?:at|rt|ac)_[A-Za-z0-9._~-]+/g;

export function scrubSecrets(value: string): string {
  return value.replace(TOKEN_PATTERN, "[redacted-token]");
}

function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubSecrets(value);
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  if (value instanceof Error) {
    return { type: value.name, message: scrubSecrets(value.message) };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubDeep(v, depth + 1);
  return out;
}

export const logger = pino({
  level: logLevel(),
  // The product's slug (lib/config/product.ts): a log query for `service` follows `npm run rename`.
  base: { service: PRODUCT.logService },
  redact: {
    paths: [...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`), "headers.authorization", "req.headers.cookie"],
    censor: "[redacted]",
  },
  formatters: {
    log: (object) => scrubDeep(object) as Record<string, unknown>,
  },
  hooks: {
    logMethod(args, method) {
      // Scrub the message string too (the formatter above only sees the object argument).
      const scrubbed = args.map((a) => (typeof a === "string" ? scrubSecrets(a) : a)) as typeof args;
      return method.apply(this, scrubbed);
    },
  },
});
