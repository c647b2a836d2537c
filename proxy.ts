// proxy.ts (Next.js 16's name for middleware.ts): runs before every page and gives its response the
// security headers of lib/http/security-headers.ts, with a fresh Content-Security-Policy nonce. A
// POST from another site (a server action forged by a page elsewhere) is refused here with 403,
// before Next.js decodes it (lib/http/cross-site.ts says why Next.js's own check is not enough). A
// request naming a server action (`Next-Action`) on a path that has no page is refused with 404, and
// a server action's body that Next.js would fail to decode with 400 (lib/http/server-action-body.ts).
import { NextResponse, type NextRequest } from "next/server";
import { env } from "@/lib/env";
import { crossSiteRefusal, isPossibleServerAction, isServerActionOutsidePages } from "@/lib/http/cross-site";
import { SERVER_ACTION_BODY_LIMIT, serverActionBodyFault } from "@/lib/http/server-action-body";
import { createNonce, securityHeaders } from "@/lib/http/security-headers";
import { logger } from "@/lib/log";
import { serviceOrigins } from "@/lib/partner-api/service-origins";

export async function proxy(request: NextRequest): Promise<NextResponse> {
  const headers = pageSecurityHeaders(request.nextUrl.pathname);
  const plain = (status: number, text: string) =>
    new NextResponse(text, { status, headers: { ...headers, "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" } });
  if (isServerActionOutsidePages(request.nextUrl.pathname, request.method, request.headers)) {
    // 404, not 400 or 405: the request is well-formed and the method may be one the path takes
    // (the webhook route takes POSTs); what it names, a server action at this path, does not exist.
    // Anyone can send this, so one line at info level, never an error.
    logger.info({ path: request.nextUrl.pathname.slice(0, 200) }, "server action on a path without pages refused (404): server actions live only on pages");
    return plain(404, "Not found.\n");
  }
  const appUrl = new URL(env().APP_URL);
  const refusal = crossSiteRefusal(request.method, request.headers, appUrl.origin);
  if (refusal) {
    logger.warn({ path: request.nextUrl.pathname.slice(0, 200), [refusal.reason]: refusal.value }, "cross-site POST to a page refused (CSRF guard); nothing was run");
    return plain(403, "Refused: this request came from another site.\n");
  }
  // Next.js reads the nonce from the *request's* CSP header while it renders, and puts it on every
  // script it emits; the browser reads the policy from the response's.
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("Content-Security-Policy", headers["Content-Security-Policy"]!);
  if (isPossibleServerAction(request.method, request.headers)) {
    const fault = await serverActionFault(request);
    if (fault) {
      // Anyone can send this: one line at info level, never an error.
      logger.info({ path: request.nextUrl.pathname.slice(0, 200), fault: fault.reason.slice(0, 100) }, "server action request refused before decoding: its body cannot be decoded");
      return plain(fault.status, fault.status === 413 ? "Refused: the request is too large.\n" : "Refused: the request's body is not a server action call.\n");
    }
    // Next.js compares a server action's Origin with the host the request claims (X-Forwarded-Host,
    // else Host) and answers a mismatch with a 500, so a forged X-Forwarded-Host made one. The check
    // above has already compared Origin with APP_URL, the app's real origin, and APP_URL is read at
    // run time, where next.config's serverActions.allowedOrigins cannot take it: tell Next.js the
    // host that was checked. (A deployment whose proxy forwards no host works the same way.)
    requestHeaders.set("X-Forwarded-Host", appUrl.host);
  }
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
  // except a request to any of these that names a server action (the `Next-Action` header), or to
  // /_next/* that Next.js would read as a form's server action (a multipart body): it is refused
  // here, and only such requests have their bodies buffered (register A108).
  matcher: [
    "/((?!api/|_next/).*)",
    { source: "/api/:path*", has: [{ type: "header", key: "next-action" }] },
    { source: "/_next/:path*", has: [{ type: "header", key: "next-action" }] },
    { source: "/_next/:path*", has: [{ type: "header", key: "content-type", value: "multipart/form-data.*" }] },
  ],
};

/** Why Next.js would fail on this server action's body (413 or 400), or null when it would not. */
async function serverActionFault(request: NextRequest): Promise<{ status: 400 | 413; reason: string } | null> {
  if (Number(request.headers.get("content-length") ?? 0) > SERVER_ACTION_BODY_LIMIT) return { status: 413, reason: "body too large" };
  // Next.js keeps its own copy of a body the proxy reads, and hands it to the page unchanged.
  const bytes = await request.clone().arrayBuffer();
  if (bytes.byteLength > SERVER_ACTION_BODY_LIMIT) return { status: 413, reason: "body too large" };
  const fetchAction = request.headers.has("next-action");
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.startsWith("multipart/form-data")) {
    const reason = serverActionBodyFault(new TextDecoder().decode(bytes), fetchAction);
    return reason ? { status: 400, reason } : null;
  }
  let form: FormData;
  try {
    form = await new Response(bytes, { headers: { "Content-Type": contentType } }).formData();
  } catch {
    return { status: 400, reason: "not a multipart body" };
  }
  const reason = serverActionBodyFault(form, fetchAction);
  return reason ? { status: 400, reason } : null;
}

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
