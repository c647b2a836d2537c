// proxy.ts (Next.js 16's name for middleware.ts): runs before every page and gives its response the
// security headers of lib/http/security-headers.ts, with a fresh Content-Security-Policy nonce. A
// POST from another site (a server action forged by a page elsewhere) is refused here with 403,
// before Next.js decodes it (lib/http/cross-site.ts says why Next.js's own check is not enough).
import { NextResponse, type NextRequest } from "next/server";
import { env } from "@/lib/env";
import { crossSiteRefusal } from "@/lib/http/cross-site";
import { pageSecurityHeaders } from "@/lib/http/security-headers";
import { logger } from "@/lib/log";

export function proxy(request: NextRequest): NextResponse {
  const headers = pageSecurityHeaders(request.nextUrl.pathname);
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
  // - /_next/*: the build's static files and the dev server's own traffic, no documents.
  matcher: ["/((?!api/|_next/|favicon.ico).*)"],
};
