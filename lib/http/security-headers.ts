// The security headers of every page the app serves. proxy.ts applies them to each response, with
// a fresh nonce and the service's origins for form-action (lib/partner-api/service-origins.ts, which
// proxy.ts reads: a helper this low imports nothing of the domain, .dependency-cruiser.mjs); the API
// routes (JSON only) get a fixed set from next.config.mjs instead (see there why).
//
// - Content-Security-Policy, nonce-based: Next.js puts the request's nonce on its own scripts (the
//   framework, the page's bundles and the inline scripts that carry the server-rendered data), and
//   the browser runs nothing else: an injected <script> or `onclick=` does not run. 'strict-dynamic'
//   lets those nonced scripts load the chunks they need. This is what Next.js's CSP guide describes
//   (node_modules/next/dist/docs/01-app/02-guides/content-security-policy.md).
// - frame-ancestors 'none' and X-Frame-Options: DENY (for browsers without CSP 2): no page of the
//   app can be framed, so no click-jacking of the staff console or the re-authorize button.
// - X-Content-Type-Options: nosniff: a response is only ever what its Content-Type says.
// - Referrer-Policy: other sites learn at most the app's origin, never a path or query. The
//   redirect_uri says `no-referrer`: its query holds the authorization code.
// - Strict-Transport-Security, only when APP_URL is https: the browser then never speaks plain
//   http to the app again. Sent over http it would be ignored (and must not pin `localhost`).
import "server-only";
import { randomBytes } from "node:crypto";

export type ReferrerPolicy = "strict-origin-when-cross-origin" | "no-referrer";

export type SecurityHeaderOptions = {
  /** Fresh for each response, unguessable (128 random bits). */
  nonce: string;
  /** `next dev`: React needs eval() for its debugging aids, and the dev overlay injects styles. */
  development: boolean;
  /** The app's public origin: when it is https, HSTS and upgrade-insecure-requests are added. */
  appUrl: string;
  /**
   * Where forms may be sent besides the app itself: the service's origins. The banner's "Review and
   * approve" is a form whose server action redirects to reauth_url, and browsers check a form's
   * redirects against form-action too (before hydration the form is a plain POST).
   */
  formActionOrigins: readonly string[];
  referrerPolicy: ReferrerPolicy;
};

/** One year; no `preload`: putting a domain on the browsers' preload list is the partner's own decision. */
const HSTS = "max-age=31536000; includeSubDomains";

export function createNonce(): string {
  return randomBytes(16).toString("base64");
}

const servedOverHttps = (appUrl: string) => new URL(appUrl).protocol === "https:";

export function contentSecurityPolicy(options: SecurityHeaderOptions): string {
  const nonce = `'nonce-${options.nonce}'`;
  const directives: string[][] = [
    ["default-src", "'self'"],
    ["script-src", "'self'", nonce, "'strict-dynamic'", ...(options.development ? ["'unsafe-eval'"] : [])],
    // <style> elements need the nonce (in development, the dev overlay's styles carry none).
    ["style-src", "'self'", options.development ? "'unsafe-inline'" : nonce],
    // Inline style *attributes* are allowed: they cannot run script, Next.js's built-in error and
    // not-found pages use them, and so does the redirect_uri's plain "please reload" page.
    ["style-src-attr", "'unsafe-inline'"],
    ["img-src", "'self'", "data:", "blob:"],
    ["font-src", "'self'"],
    ["connect-src", "'self'"],
    ["object-src", "'none'"],
    ["base-uri", "'none'"],
    ["form-action", "'self'", ...options.formActionOrigins],
    ["frame-ancestors", "'none'"],
    ...(servedOverHttps(options.appUrl) ? [["upgrade-insecure-requests"]] : []),
  ];
  return directives.map((directive) => directive.join(" ")).join("; ");
}

export function securityHeaders(options: SecurityHeaderOptions): Record<string, string> {
  return {
    "Content-Security-Policy": contentSecurityPolicy(options),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": options.referrerPolicy,
    ...(servedOverHttps(options.appUrl) ? { "Strict-Transport-Security": HSTS } : {}),
  };
}
