// One live call to the partner API on behalf of the signed-in operator (a write, or a read that has
// no local copy, such as the beta EVSE charge history): interactive priority in the install's rate
// budget (lib/partner-api/budget.ts), and every way it can fail turned into one value a page or a
// form can explain, instead of an exception that would end in a 500.
import "server-only";
import { logger } from "@/lib/log";
import { withAccessToken } from "@/lib/oauth/access";
import { TokenCircuitOpenError } from "@/lib/oauth/circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "@/lib/oauth/errors";
import { PartnerApiError, type ApiCall, type PartnerApiErrorKind } from "@/lib/partner-api/client";

export type LiveFailure = {
  kind: PartnerApiErrorKind | NoUsableTokenError["reason"];
  /** The service's errorCode, when it sent one (e.g. FEATURE_NOT_ENABLED, ACCESS_FORBIDDEN). */
  errorCode?: string;
  /** rate_limited: when the install's budget (or the service) allows the next request. */
  retryInSeconds?: number;
  /** bad_request: the service's explanation (lib/partner-api/client.ts). */
  serviceMessage?: string;
};

export type LiveResult<T> = { ok: true; data: T } | { ok: false; failure: LiveFailure };

export async function callLive<T>(installRowId: string, what: string, use: (accessToken: string, call: ApiCall) => Promise<T>): Promise<LiveResult<T>> {
  try {
    // A page or a form is waiting: interactive, so background work's reserve is not taken (budget.ts).
    return { ok: true, data: await withAccessToken(installRowId, use, { priority: "interactive" }) };
  } catch (error) {
    if (error instanceof PartnerApiError) {
      // NEEDS_REAUTH has already flagged the install (lib/oauth/access.ts); the caller shows the banner.
      logger.warn({ installRowId, what, kind: error.kind, status: error.status, errorCode: error.errorCode }, "live dashboard call failed");
      return {
        ok: false,
        failure: {
          kind: error.kind,
          errorCode: error.errorCode,
          retryInSeconds: error.detail.resetsInSeconds,
          serviceMessage: error.detail.serviceMessage,
        },
      };
    }
    if (error instanceof NoUsableTokenError) return { ok: false, failure: { kind: error.reason } };
    if (error instanceof TokenRefreshUnavailableError || error instanceof TokenCircuitOpenError) {
      logger.warn({ installRowId, what, err: error }, "live dashboard call failed: no fresh token");
      return { ok: false, failure: { kind: "unavailable" } };
    }
    throw error;
  }
}
