// The service's own web origins: where the app may send an operator's browser on the service's
// behalf. contract §7 tells the app to "send the operator to reauth_url", a URL that arrives in an
// API answer; a compromised or spoofed answer must not turn the app's "Review and approve" button
// into a link to someone else's page (a phishing page that looks like the portal's consent). So the
// app follows such a URL only when its origin is one of these.
import "server-only";
import { env } from "@/lib/env";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * REAUTH_URL_ORIGINS when set; otherwise the origins the app already trusts as the service's: the
 * operator portal, the identity provider and the partner API (the contract names no host for reauth_url).
 */
export function serviceOrigins(): ReadonlySet<string> {
  const { REAUTH_URL_ORIGINS, OPERATOR_PORTAL_URL, OAUTH_ISSUER, PARTNER_API_BASE_URL } = env();
  if (REAUTH_URL_ORIGINS) return new Set(REAUTH_URL_ORIGINS);
  const configured = [OPERATOR_PORTAL_URL, OAUTH_ISSUER, PARTNER_API_BASE_URL].filter((url): url is string => Boolean(url));
  return new Set(configured.map((url) => new URL(url).origin));
}

/**
 * Whether the browser may be sent to `url` as the service's page: https (or plain http to a
 * loopback host, for the local sandbox), at one of the service's origins. Never `javascript:`,
 * never a look-alike host: the comparison is on the parsed origin, so `https://portal.example@evil.example`
 * (whose origin is evil.example) and `https://portal.example.evil.example` are both refused.
 */
export function isServiceUrl(url: string, origins: ReadonlySet<string> = serviceOrigins()): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const secure = parsed.protocol === "https:" || (parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname));
  return secure && origins.has(parsed.origin);
}

/** What a log line may say about a URL that was refused: its origin, never its path or query (they may hold a ticket). */
export function originForLog(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(not a URL)";
  }
}
