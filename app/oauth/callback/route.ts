// GET /oauth/callback: the registered redirect_uri; redeems the code at once (contract §2: codes
// live one minute and work once, so the redemption is never queued).
import { NextResponse, type NextRequest } from "next/server";
import { signInAfterInstall } from "@/lib/auth/pending-sign-in";
import { env } from "@/lib/env";
import { takeCallbackAttempt } from "@/lib/installs/callback-limit";
import { InstallFailedError, completeInstall, type InstallFailureReason } from "@/lib/installs/connect";
import { logger } from "@/lib/log";

export const dynamic = "force-dynamic";

// The code must never leak: not in a Referer header, not in a cache.
const PRIVATE = { "Referrer-Policy": "no-referrer", "Cache-Control": "no-store" };

// Redirect with 303 so a reload of the next page never replays the code.
function redirectTo(path: string): NextResponse {
  const response = NextResponse.redirect(new URL(path, env().APP_URL), 303);
  for (const [name, value] of Object.entries(PRIVATE)) response.headers.set(name, value);
  return response;
}

// The app's database is down and the code was not redeemed: answer here (no redirect), so that a
// reload of this very address retries the still-valid code within its minute.
function retryHere(): NextResponse {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Please reload</title></head>
<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem">
<h1>The app is having trouble</h1>
<p>It could not save your connection just now, and nothing was used up. Reload this page within a minute to try again;
after that, connect the app again from the operator portal.</p></body></html>`;
  return new NextResponse(html, { status: 503, headers: { ...PRIVATE, "Content-Type": "text/html; charset=utf-8", "Retry-After": "5" } });
}

// Too many callbacks from this address (lib/installs/callback-limit.ts): nothing was spent, and the
// code (if it is a real one) is still valid for the rest of its minute.
function tooManyRequests(retryAfterSeconds: number): NextResponse {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too many requests</title></head>
<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem">
<h1>Too many connection attempts</h1>
<p>This app received too many connection requests from your network just now. Nothing was used up.
Try again in ${retryAfterSeconds} s by reloading this page; if more than a minute has passed since you approved
the connection, connect the app again from the operator portal.</p></body></html>`;
  return new NextResponse(html, {
    status: 429,
    headers: { ...PRIVATE, "Content-Type": "text/html; charset=utf-8", "Retry-After": String(retryAfterSeconds) },
  });
}

export async function GET(request: NextRequest): Promise<NextResponse> {
  const query = request.nextUrl.searchParams;
  const admitted = await takeCallbackAttempt(query, request.headers);
  if (!admitted.allowed) return tooManyRequests(admitted.retryAfterSeconds);

  let reason: InstallFailureReason;
  try {
    const operator = await completeInstall(query);
    // Signed in at once, unless this browser holds someone else's session: then it is asked first
    // (login CSRF, lib/auth/pending-sign-in.ts). The install is stored either way.
    const next = await signInAfterInstall(operator);
    const response = redirectTo(next.kind === "signed_in" ? "/dashboard" : "/oauth/continue");
    response.cookies.set(next.cookie.name, next.cookie.value, next.cookie.options);
    return response;
  } catch (error) {
    if (error instanceof InstallFailedError) {
      reason = error.reason;
    } else {
      logger.error({ err: error }, "install callback failed unexpectedly");
      reason = "app_failed_after_redemption";
    }
  }
  if (reason === "app_unavailable") return retryHere();
  return redirectTo(`/install/failed?reason=${reason}`);
}
