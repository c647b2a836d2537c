// Cross-site requests to the app's pages (issue 14): a form another site posts into a signed-in
// browser must not run a server action (CSRF).
//
// Server actions are POSTs to a page. Next.js already compares the `Origin` header with the `Host`
// (serverActions.allowedOrigins widens that; this app sets none), but:
//   - it lets a request without `Origin` through, and never reads `Sec-Fetch-Site`;
//   - it compares with the `Host` the request names, not with the app's own origin (APP_URL);
//   - it answers a refused action with a 500 (and a stack trace in the log), as if the app broke.
// So proxy.ts asks this function first, for every POST to a page, and answers 403 before Next.js
// decodes anything. The rule, from the Fetch Metadata headers every current browser sends:
//   - `Sec-Fetch-Site`, when sent, must be `same-origin` (or `none`: the person's own action, e.g. a
//     resubmitted form). `same-site` is refused too: a sibling subdomain is another application;
//   - `Origin`, when sent, must be APP_URL's origin exactly;
//   - neither header: not a browser (browsers send `Origin` with every POST), so no victim's cookie
//     rides along: a CSRF needs a browser. Such a request is let through; the action's own checks
//     (a staff session, its role) still decide.
// The session cookie's SameSite=Lax (next-auth's default, lib/auth/options.ts) is a third layer: a
// cross-site POST does not carry it at all.
//
// Not server-only: a pure function of three strings, unit-tested on its own.

export type CrossSiteRefusal = { reason: "sec-fetch-site" | "origin"; value: string };

const UNSAFE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const ALLOWED_FETCH_SITES = new Set(["same-origin", "none"]);

/** Why this request must be refused as cross-site, or null when it may go on. */
export function crossSiteRefusal(
  method: string,
  headers: { get(name: string): string | null },
  appOrigin: string,
): CrossSiteRefusal | null {
  if (!UNSAFE_METHODS.has(method.toUpperCase())) return null;
  const fetchSite = headers.get("sec-fetch-site");
  if (fetchSite !== null && !ALLOWED_FETCH_SITES.has(fetchSite.trim().toLowerCase())) {
    return { reason: "sec-fetch-site", value: fetchSite.slice(0, 40) };
  }
  const origin = headers.get("origin");
  // "null" is an opaque origin (a sandboxed frame, a data: URL): never the app.
  if (origin !== null && origin !== appOrigin) return { reason: "origin", value: origin.slice(0, 100) };
  return null;
}

// Server actions exist only on pages. Next.js reads a request as a server-action call when it is a
// POST with a `Next-Action` header (a fetch action) or a multipart body (a form's action before the
// page hydrated), wherever it arrives that the app router answers. On a path with no page (an API
// route, the build's files under /_next, /favicon.ico) no action can exist, yet Next.js still treats
// the request as one: the route handler runs anyway, or Next.js fails to find the action, answers
// 409 and logs a stack trace per request (500s were seen with a forged X-Forwarded-Host). Such a
// request is never legitimate, so it is refused before Next.js sees it (proxy.ts, whose matcher lets
// it see these paths only when they carry the header or, under /_next, a multipart body). API routes
// take multipart bodies of their own, and Next.js runs no action there: only the header counts.
// Register A108.
const PATHS_WITHOUT_PAGES = /^\/(?:api(?:\/|$)|_next\/|favicon\.ico$)/;

/** Whether Next.js would read this request as a server-action call (its `getServerActionRequestMetadata`). */
export function isPossibleServerAction(method: string, headers: { get(name: string): string | null }): boolean {
  return method === "POST" && (headers.get("next-action") !== null || (headers.get("content-type") ?? "").startsWith("multipart/form-data"));
}

/** Whether this request names a server action on a path where none can exist. */
export function isServerActionOutsidePages(pathname: string, method: string, headers: { get(name: string): string | null }): boolean {
  if (!PATHS_WITHOUT_PAGES.test(pathname)) return false;
  if (headers.get("next-action") !== null) return true;
  return !pathname.startsWith("/api") && isPossibleServerAction(method, headers);
}
