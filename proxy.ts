// proxy.ts (Next.js 16's name for middleware.ts): runs before every page and gives its response the
// security headers of lib/http/security-headers.ts, with a fresh Content-Security-Policy nonce. A
// POST from another site (a server action forged by a page elsewhere) is refused here with 403,
// before Next.js decodes it (lib/http/cross-site.ts says why Next.js's own check is not enough). A
// request naming a server action (`Next-Action`) on a path that has no page is refused with 404.
import { NextResponse, type NextRequest } from "next/server";
import { env } from "@/lib/env";
import { crossSiteRefusal, isServerActionOutsidePages } from "@/lib/http/cross-site";
import { createNonce, securityHeaders } from "@/lib/http/security-headers";
import { logger } from "@/lib/log";
import { serviceOrigins } from "@/lib/partner-api/service-origins";

export function proxy(request: NextRequest): NextResponse {
  const headers = pageSecurityHeaders(request.nextUrl.pathname);
  if (isServerActionOutsidePages(request.nextUrl.pathname, request.headers)) {
    // 404, not 400 or 405: the request is well-formed and the method may be one the path takes
    // (the webhook route takes POSTs); what it names, a server action at this path, does not exist.
    // Anyone can send this, so one line at info level, never an error.
    logger.info({ path: request.nextUrl.pathname.slice(0, 200) }, "Next-Action header on a path without pages refused (404): server actions live only on pages");
    return new NextResponse("Not found.\n", {
      status: 404,
      headers: { ...headers, "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
    });
  }
  const refusal = crossSiteRefusal(request.method, request.headers, new URL(env().APP_URL).origin);
  if (refusal) {
    logger.warn({ path: request.nextUrl.pathname, [refusal.reason]: refusal.value }, "cross-site POST to a page refused (CSRF guard); nothing was run");
    return new NextResponse("Refused: this request came from another site.\n", {
      status: 403,
      headers: { ...headers, "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
    });
  }
  // Next.js reads the nonce from the *request's* CSP header while it renders, and puts it on every
  // script it emits; the browser reads the policy from the response's.
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("Content-Security-Policy", headers["Content-Security-Policy"]!);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

export const config = {
  // Every page, the redirect_uri included, but not:
  // - /api/*: JSON only (next.config.mjs gives them fixed headers), and when a proxy matches a
  //   request Next.js buffers its whole body before the route runs, which would undo the webhook
  //   route's own body limit and read deadline (lib/http/read-body.ts);
  // - /_next/*: the build's static files and the dev server's own traffic, no documents;
  // except a request to any of these that names a server action (the `Next-Action` header): it is
  // refused here, and only such requests have their bodies buffered (register A108).
  matcher: [
    "/((?!api/|_next/|favicon.ico).*)",
    { source: "/api/:path*", has: [{ type: "header", key: "next-action" }] },
    { source: "/_next/:path*", has: [{ type: "header", key: "next-action" }] },
    { source: "/favicon.ico", has: [{ type: "header", key: "next-action" }] },
  ],
};

/** The headers for one page request, from the app's configuration. */
function pageSecurityHeaders(pathname: string, nonce: string = createNonce()): Record<string, string> {
  const { NODE_ENV, APP_URL, OAUTH_REDIRECT_URI } = env();
  return securityHeaders({
    nonce,
    development: NODE_ENV === "development",
    appUrl: APP_URL,
    formActionOrigins: [...serviceOrigins()],
    // The redirect_uri's address holds the authorization code: it must not travel in a Referer.
    referrerPolicy: pathname === new URL(OAUTH_REDIRECT_URI).pathname ? "no-referrer" : "strict-origin-when-cross-origin",
  });
}
