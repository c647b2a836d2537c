// GET /oauth/callback: the registered redirect_uri; redeems the code at once (contract §2: codes
// live one minute and work once, so the redemption is never queued).
import { NextResponse, type NextRequest } from "next/server";
import { createOperatorSessionCookie } from "@/lib/auth/operator-session";
import { env } from "@/lib/env";
import { InstallFailedError, completeInstall, type InstallFailureReason } from "@/lib/installs/connect";
import { logger } from "@/lib/log";

export const dynamic = "force-dynamic";

// Redirect with 303 so a reload of the next page never replays the code, and keep the code out of
// any Referer header and any cache.
function redirectTo(path: string): NextResponse {
  const response = NextResponse.redirect(new URL(path, env().APP_URL), 303);
  response.headers.set("Referrer-Policy", "no-referrer");
  response.headers.set("Cache-Control", "no-store");
  return response;
}

export async function GET(request: NextRequest): Promise<NextResponse> {
  let reason: InstallFailureReason;
  try {
    const { installRowId, operatorId } = await completeInstall(request.nextUrl.searchParams);
    const response = redirectTo("/dashboard");
    const cookie = await createOperatorSessionCookie({ installRowId, operatorId });
    response.cookies.set(cookie.name, cookie.value, cookie.options);
    return response;
  } catch (error) {
    if (error instanceof InstallFailedError) {
      reason = error.reason;
    } else {
      logger.error({ err: error }, "install callback failed unexpectedly");
      reason = "app_unavailable";
    }
  }
  return redirectTo(`/install/failed?reason=${reason}`);
}
