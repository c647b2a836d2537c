// proxy.ts (Next.js 16's name for middleware.ts): runs before every page and gives its response the
// security headers of lib/http/security-headers.ts, with a fresh Content-Security-Policy nonce.
import { NextResponse, type NextRequest } from "next/server";
import { pageSecurityHeaders } from "@/lib/http/security-headers";

export function proxy(request: NextRequest): NextResponse {
  const headers = pageSecurityHeaders(request.nextUrl.pathname);
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
