// The formats several settings share (URLs, origin lists, keys), for the parts of the schema in this
// folder; lib/env.ts re-exports the ones checked on their own elsewhere (and by their unit tests).
import "server-only";
import { z } from "zod";

export const urlString = z.url({ protocol: /^https?$/ });

export const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Comma-separated origins (`https://host[:port]`, plain http for loopback only), normalised by URL. */
export const OriginListSchema = z.string().transform((value, ctx) => {
  const origins: string[] = [];
  for (const entry of value.split(",").map((s) => s.trim()).filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    const secure = url && (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)));
    if (!url || !secure || url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
      ctx.addIssue({ code: "custom", message: `"${entry}" is not an origin: write it as https://host[:port] (http only for localhost)` });
      return z.NEVER;
    }
    origins.push(url.origin);
  }
  if (origins.length === 0) {
    ctx.addIssue({ code: "custom", message: "list at least one origin, or leave it unset for the default" });
    return z.NEVER;
  }
  return origins;
});

/** `id:base64key[,id:base64key...]`; the first entry encrypts, all of them decrypt. */
export const encryptionKeysSchema = z
  .string()
  .min(1)
  .transform((value, ctx) => {
    const keys: { id: string; key: Buffer }[] = [];
    for (const entry of value.split(",").map((s) => s.trim()).filter(Boolean)) {
      const [id, material, extra] = entry.split(":");
      const key = material ? Buffer.from(material, "base64") : Buffer.alloc(0);
      if (!id || !/^[A-Za-z0-9_-]{1,32}$/.test(id) || extra !== undefined || key.length !== 32) {
        ctx.addIssue({
          code: "custom",
          message: "each entry must be `<key id>:<32 bytes, base64>` (generate one with `openssl rand -base64 32`)",
        });
        return z.NEVER;
      }
      keys.push({ id, key });
    }
    if (keys.length === 0) {
      ctx.addIssue({ code: "custom", message: "at least one key is required" });
      return z.NEVER;
    }
    if (new Set(keys.map((k) => k.id)).size !== keys.length) {
      ctx.addIssue({ code: "custom", message: "key ids must be unique" });
      return z.NEVER;
    }
    return keys;
  });

/**
 * The issuer exactly as the identity provider names itself. Discovery (RFC 8414 §3.3, OpenID
 * Discovery §4.3) requires the document's `issuer` to equal this address, and an issuer with a path
 * never ends in a slash, so `https://idp.example.com/oauth/` can never match and every token request
 * would fail at discovery. Refused here, with the fix in the message, rather than silently
 * normalised: the value is copied from what the service gave, and a wrong copy is worth knowing about.
 */
export const oauthIssuerSchema = urlString.refine((value) => {
  // zod runs refinements after a failed format check too; that failure is already reported.
  if (!URL.canParse(value)) return true;
  const { pathname } = new URL(value);
  return pathname === "/" || !pathname.endsWith("/");
}, "must not end with a slash after a path (e.g. https://idp.example.com/oauth, not https://idp.example.com/oauth/): discovery compares it with the issuer exactly");

/**
 * The partner API's origin: contract §4 puts every path under /api/v1 at {base_url}, and
 * lib/partner-api/client.ts resolves "/api/v1/…" against this value, which drops any path it has.
 * A path here would be ignored without a word, so it is refused instead (docs/going-live.md).
 */
export const partnerApiBaseUrlSchema = urlString.refine((value) => !URL.canParse(value) || new URL(value).pathname === "/", {
  message: "must be the API's origin only (e.g. https://api.example.com): the app adds /api/v1 itself, and a path here would be ignored",
});
