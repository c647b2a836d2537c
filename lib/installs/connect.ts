// What happens at the redirect_uri, step by step (contract §1.4-§1.5):
//   1. read the callback query (an `error` from the service, or a `code`);
//   2. redeem the code at once, inside this request (codes live one minute and work once);
//   3. ask the API whose token this is (lib/installs/identity.ts);
//   4. store the install and its encrypted tokens in one transaction.
// Nothing is stored unless all four succeed. The route then signs the operator in.
import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { TokenEndpointError, redeemAuthorizationCode } from "@/lib/oauth/token-endpoint";
import { openTokenCircuit } from "@/lib/oauth/circuit";
import { storeTokenGrant } from "@/lib/oauth/token-vault";
import { PartnerApiError } from "@/lib/partner-api/client";
import { TokenOwnerMismatchError, identifyTokenOwner } from "./identity";
import { recordInstall } from "./register";
import { transitionInstall } from "./state";

/** Why an install could not be completed; each has its own explanation page (app/install/failed). */
export type InstallFailureReason =
  | "access_denied" // the operator declined at consent
  | "authorization_error" // the service sent another OAuth error
  | "code_expired"
  | "code_used"
  | "code_rejected" // invalid_grant for another stated reason (e.g. a code of another client)
  | "redirect_mismatch" // invalid_grant: the app's redirect_uri is not the one the service used
  | "app_misconfigured" // invalid_client: the app's credentials are wrong or the client was removed
  | "service_unavailable"
  | "bad_request" // a callback without a code or error: not sent by the service
  | "app_unavailable"; // the app's own database is down; the code was not redeemed

export class InstallFailedError extends Error {
  constructor(readonly reason: InstallFailureReason) {
    super(`install failed: ${reason}`);
    this.name = "InstallFailedError";
  }
}

const CallbackQuerySchema = z.union([
  z.object({ error: z.string().min(1).max(200), error_description: z.string().max(1000).optional() }),
  z.object({ code: z.string().min(1).max(2048) }),
]);

/**
 * The identity provider says why a code was refused only in prose (public-facts.md: it behaves
 * like Ory Hydra). Hydra adds a hint for a reused code and for a redirect_uri mismatch, but an
 * expired (or unknown) code gets the generic invalid_grant description alone, so that is what the
 * generic answer means at a callback. The operator's action is the same for all of them
 * (contract §7: restart from the operator portal), except for a redirect_uri mismatch, which is the
 * app's configuration and not theirs. Keep this mapping here, in one place (docs/spec-gaps.md).
 */
export function reasonForInvalidGrant(description: string | undefined): InstallFailureReason {
  const text = description ?? "";
  if (/already (been )?used/i.test(text)) return "code_used";
  if (/"?redirect_uri"? from this request does not match/i.test(text)) return "redirect_mismatch";
  if (/does not match the one from the authorize request/i.test(text)) return "code_rejected";
  return "code_expired";
}

function reasonFor(error: unknown): InstallFailureReason {
  if (error instanceof TokenEndpointError) {
    switch (error.kind) {
      case "invalid_grant":
        return reasonForInvalidGrant(error.description);
      case "invalid_client":
        return "app_misconfigured";
      case "not_sent":
      case "unavailable":
      case "bad_response":
        return "service_unavailable";
      default:
        return "code_rejected";
    }
  }
  if (error instanceof PartnerApiError || error instanceof TokenOwnerMismatchError) return "service_unavailable";
  throw error; // a bug or a database outage: let the route answer 503
}

export async function completeInstall(query: URLSearchParams): Promise<{ installRowId: string; operatorId: string }> {
  const parsed = CallbackQuerySchema.safeParse(Object.fromEntries(query));
  if (!parsed.success) throw new InstallFailedError("bad_request");
  if ("error" in parsed.data) {
    logger.info({ error: parsed.data.error }, "the service returned an authorization error");
    throw new InstallFailedError(parsed.data.error === "access_denied" ? "access_denied" : "authorization_error");
  }

  // Check the database before redeeming: if it is down, the code stays unredeemed and the operator
  // can simply reload this page within the minute, instead of losing the tokens after redemption.
  try {
    await db().$queryRaw`SELECT 1`;
  } catch (error) {
    logger.error({ err: error }, "database unavailable at the install callback");
    throw new InstallFailedError("app_unavailable");
  }

  const issuedAt = new Date();
  try {
    const tokens = await redeemAuthorizationCode(query);
    const owner = await identifyTokenOwner(tokens.accessToken);
    const install = await db().$transaction(async (tx) => {
      const row = await recordInstall(
        tx,
        { installId: owner.installId, operatorId: owner.operatorId, clientId: env().OAUTH_CLIENT_ID, grantedScopes: tokens.scopes },
        "callback",
      );
      await storeTokenGrant(tx, row.id, tokens, issuedAt);
      // A new consent gives a working token chain again (no-op for an install that is already
      // active, and never for a revoked one: contract §3, a revoked install does not come back).
      await transitionInstall(tx, row.id, "ACTIVE", "callback", "operator consented");
      return row;
    });
    logger.info({ installRowId: install.id, installId: owner.installId, operatorId: owner.operatorId }, "install connected");
    return { installRowId: install.id, operatorId: owner.operatorId };
  } catch (error) {
    if (error instanceof TokenEndpointError && error.kind === "invalid_client") {
      // Every token request will fail the same way: pause refreshing and tell staff (contract §7).
      await openTokenCircuit(error.description ?? "invalid_client at the redirect_uri").catch(() => undefined);
    }
    throw new InstallFailedError(reasonFor(error));
  }
}
