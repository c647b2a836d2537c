// What happens at the redirect_uri, step by step (contract §1.4-§1.5):
//   1. read the callback query (an `error` from the service, or a `code`);
//   2. make sure the app can store what it is about to receive, and knows the identity provider
//      (discovery), else the code stays unspent;
//   3. claim the code, so no copy of this request presents it a second time (code-claims.ts);
//   4. redeem the code at once, inside this request (codes live one minute and work once);
//   5. ask the API whose token this is (lib/installs/identity.ts);
//   6. store the install and its encrypted tokens in one transaction.
// Nothing is stored unless all of them succeed. The route then signs the operator in.
import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { retryWhileDatabaseUnavailable } from "@/lib/db/retry";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { AuthorizationCodeSchema } from "@/lib/oauth/authorization-code";
import { noteTokenEndpointAccepted, openTokenCircuit } from "@/lib/oauth/circuit";
import { AuthorizationResponseIssuerError, TokenEndpointError, ensureOAuthConfiguration, redeemAuthorizationCode } from "@/lib/oauth/token-endpoint";
import { storeTokenGrant } from "@/lib/oauth/token-vault";
import { alertOnReconnected } from "@/lib/alerts/incidents";
import { enqueueFirstSync } from "@/lib/jobs/enqueue";
import { resizeBudget } from "@/lib/partner-api/budget";
import { PartnerApiError } from "@/lib/partner-api/client";
import { claimAuthorizationCode, markCodeDone, markCodeFailed, readCodeRefusalAlarm } from "./code-claims";
import { TokenOwnerMismatchError, identifyTokenOwner } from "./identity";
import { InstallConflictError, recordInstall } from "./register";
import { transitionInstall } from "./state";

/** Why an install could not be completed; each has its own explanation (app/install/failed). */
export type InstallFailureReason =
  | "access_denied" // the operator declined at consent
  | "authorization_error" // the service sent another OAuth error
  | "code_refused" // invalid_grant the app cannot explain: expired, used, or a redirect_uri mismatch
  | "code_used"
  | "code_rejected" // invalid_grant for another stated reason (e.g. a code of another client)
  // RFC 9207: the redirect named no issuer, or another one. Checked before the code is sent, so a
  // claim that failed with this reason records a code that was never spent.
  | "issuer_mismatch"
  | "code_in_progress" // a copy of this request is still completing the install
  | "redirect_mismatch" // invalid_grant: the app's redirect_uri is not the one the service used
  | "app_misconfigured" // invalid_client: the app's credentials are wrong or the client was removed
  | "service_unavailable"
  | "install_revoked" // the install was removed at the service before the app could store it
  | "bad_request" // a callback without a code or error: not sent by the service
  | "app_unavailable" // the app's own database is down; the code was NOT redeemed (reload works)
  | "app_failed_after_redemption"; // the tokens could not be stored; the code is spent

export class InstallFailedError extends Error {
  constructor(readonly reason: InstallFailureReason) {
    super(`install failed: ${reason}`);
    this.name = "InstallFailedError";
  }
}

const CallbackQuerySchema = z.union([
  z.object({ error: z.string().min(1).max(200), error_description: z.string().max(1000).optional() }),
  // A malformed code is refused here, before it costs a claim row or a token call.
  z.object({ code: AuthorizationCodeSchema }),
]);

/** How long the tokens of a redeemed code are retried while the database is away. */
const STORE_RETRY_MS = 15_000;

/**
 * Which page an `invalid_grant` for a code gets. contract §7 gives three causes (expired, already
 * used, redirect_uri differs) and one code for all of them, and RFC 6749 says no more; the
 * `error_description` is free prose. What the app knows for certain: this is the first time it
 * presents the code (its own claim, code-claims.ts, stops reloads and double clicks before they get
 * here), and not when the code was issued. So the default is a neutral page that names all three
 * causes and both ways out (code_refused), never a guess such as "expired".
 *
 * Hydra (public-facts.md) adds a hint for a reused code and for a redirect_uri mismatch; where that
 * text is unambiguous it may refine the page. Its answer for an expired or unknown code is the bare
 * description, which another server might use for anything: that stays neutral too. Keep this
 * mapping here, in one place (docs/spec-gaps.md).
 */
export function reasonForInvalidGrant(description: string | undefined): InstallFailureReason {
  const text = description ?? "";
  if (/The authorization code has already been used/i.test(text)) return "code_used";
  if (/The "redirect_uri" from this request does not match the one from the authorize request/i.test(text)) return "redirect_mismatch";
  if (/Client ID from this request does not match the one from the authorize request/i.test(text)) return "code_rejected";
  return "code_refused";
}

/**
 * The failures that record an invalid_grant refusal of a code presented for the first time, which
 * repeated within minutes point at the app's configuration (code-claims.ts, CODE_REFUSAL_ALARM).
 * A "code_used" refusal is left out: someone else redeemed that code, which is not configuration.
 */
export const CODE_REFUSAL_FAILURES: readonly InstallFailureReason[] = ["code_refused", "redirect_mismatch", "code_rejected"];

function reasonForRedemptionError(error: unknown): InstallFailureReason {
  if (error instanceof AuthorizationResponseIssuerError) return "issuer_mismatch";
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
  throw error;
}

export async function completeInstall(query: URLSearchParams): Promise<{ installRowId: string; operatorId: string }> {
  const parsed = CallbackQuerySchema.safeParse(Object.fromEntries(query));
  if (!parsed.success) throw new InstallFailedError("bad_request");
  if ("error" in parsed.data) {
    logger.info({ error: parsed.data.error }, "the service returned an authorization error");
    throw new InstallFailedError(parsed.data.error === "access_denied" ? "access_denied" : "authorization_error");
  }

  // Discovery first: if the identity provider cannot even be discovered (away, or OAUTH_ISSUER
  // misspelt), nothing is claimed or sent, and the code stays valid for its minute.
  try {
    await ensureOAuthConfiguration();
  } catch (error) {
    logger.error({ err: error }, "the identity provider could not be discovered at the install callback; the code was not sent (check OAUTH_ISSUER)");
    throw new InstallFailedError("service_unavailable");
  }

  // If the database is down, say so before spending the code: a reload within the minute works.
  let claim;
  try {
    claim = await claimAuthorizationCode(parsed.data.code);
  } catch (error) {
    logger.error({ err: error }, "database unavailable at the install callback; the code was not redeemed");
    throw new InstallFailedError("app_unavailable");
  }
  switch (claim.kind) {
    case "completed_by_other":
      return { installRowId: claim.installRowId, operatorId: claim.operatorId };
    case "failed_for_other":
      throw new InstallFailedError(claim.failure as InstallFailureReason);
    case "used":
      throw new InstallFailedError("code_used");
    case "still_pending":
      throw new InstallFailedError("code_in_progress");
    case "claimed":
      break;
  }

  const codeHash = claim.codeHash;
  try {
    return await redeemAndStore(query, codeHash);
  } catch (error) {
    const reason = error instanceof InstallFailedError ? error.reason : "app_failed_after_redemption";
    if (!(error instanceof InstallFailedError)) logger.error({ err: error }, "install callback failed after the code was redeemed");
    await markCodeFailed(codeHash, reason);
    if (CODE_REFUSAL_FAILURES.includes(reason)) await warnStaffOfRepeatedRefusals();
    throw new InstallFailedError(reason);
  }

  async function redeemAndStore(callbackParams: URLSearchParams, codeHash: string) {
    const issuedAt = new Date();
    let tokens, owner;
    try {
      tokens = await redeemAuthorizationCode(callbackParams);
      await noteTokenEndpointAccepted();
      owner = await identifyTokenOwner(tokens.accessToken);
    } catch (error) {
      if (error instanceof AuthorizationResponseIssuerError) {
        // RFC 9207: another issuer's name is a mix-up attempt, or OAUTH_ISSUER differs from the
        // issuer the service names: an error for staff. A missing one is also what a stranger's
        // hand-made request looks like: a warning. The code is not logged, and it was never sent.
        logger[error.problem === "wrong" ? "error" : "warn"](
          { problem: error.problem, expectedIssuer: env().OAUTH_ISSUER, receivedIssuer: callbackParams.get("iss")?.slice(0, 200) ?? null },
          "install callback refused: the authorization response's issuer (iss) is missing or wrong; the code was not sent",
        );
      }
      if (error instanceof TokenEndpointError && error.kind === "invalid_client") {
        // Every token request will fail the same way: pause refreshing and tell staff (contract §7).
        // The kind, not the identity provider's error_description: free text from outside (A188).
        await openTokenCircuit(`invalid_client at the redirect_uri${error.status ? ` (HTTP ${error.status})` : ""}`).catch(() => undefined);
      }
      throw new InstallFailedError(reasonForRedemptionError(error));
    }

    // A token response without `scope` (RFC 6749 §5.1 allows it) still installs: the consumer lists
    // the data scopes, and a refresh token means offline_access was granted (contract §2).
    const scopes = tokens.scopes ?? [...new Set([...owner.scopes, ...(tokens.refreshToken ? ["offline_access"] : [])])];

    // The pair exists nowhere else now: keep trying while the database is briefly away.
    const install = await retryWhileDatabaseUnavailable(
      () =>
        db().$transaction(async (tx) => {
          const row = await recordInstall(
            tx,
            {
              installId: owner.installId,
              operatorId: owner.operatorId,
              clientId: env().OAUTH_CLIENT_ID,
              grantedScopes: scopes,
              consumerKey: owner.consumerKey,
              operatorName: owner.operatorName,
            },
            "callback",
          );
          const current = await tx.install.findUniqueOrThrow({ where: { id: row.id }, select: { status: true } });
          // contract §3: a revoked install never comes back; keep no token for it.
          if (current.status === "REVOKED") throw new InstallFailedError("install_revoked");
          // A returning operator (the portal's Open, or Connect again) consented to the SAME install:
          // the new consent's pair replaces the stored one (the newest grant is the one the operator
          // just gave, and the only one if the old chain was broken). The replaced chain is NOT
          // revoked (RFC 7009): at a server where the consents of one session share one grant
          // (panva's oidc-provider), revoking the old refresh token revokes the pair stored here too,
          // and the install would be lost on its next read. Overwritten, the old refresh token exists
          // nowhere any more, so it is never presented again and its chain expires unused
          // (docs/spec-gaps.md A65).
          const reconnected = await storeTokenGrant(tx, row.id, { ...tokens, scopes }, issuedAt);
          // A new consent gives a working token chain again (a no-op for an active install, whose
          // wait for a reconnect after a lost refresh answer, if any, ends here: A185).
          const moved = await transitionInstall(tx, row.id, "ACTIVE", "callback", "operator consented");
          if (reconnected && !moved) await alertOnReconnected(tx, row.id);
          await markCodeDone(tx, codeHash, row.id, owner.operatorId);
          return row;
        }),
      STORE_RETRY_MS,
    ).catch((error: unknown) => {
      if (error instanceof InstallFailedError) throw error;
      if (error instanceof InstallConflictError) {
        logger.error({ err: error }, "the service's answer conflicts with a stored install");
        throw new InstallFailedError("service_unavailable");
      }
      throw error;
    });
    if (owner.rateLimit) {
      // The install's budget from its first call on (lib/partner-api/budget.ts); without it, the
      // default applies until the first answer's RateLimit-* headers say otherwise.
      await resizeBudget(install.id, owner.rateLimit.quota, owner.rateLimit.windowSeconds).catch((error: unknown) =>
        logger.warn({ installRowId: install.id, err: error }, "could not size the install's rate budget yet"),
      );
    }
    await enqueueFirstSync(install.id).catch((error: unknown) =>
      logger.warn({ installRowId: install.id, err: error }, "could not enqueue the install's first sync; the scheduled sync will pick it up"),
    );
    logger.info({ installRowId: install.id, installId: owner.installId, operatorId: owner.operatorId }, "install connected");
    return { installRowId: install.id, operatorId: owner.operatorId };
  }
}

/** Logs at error level while the refusal alarm is raised (staff also see it in the console). */
async function warnStaffOfRepeatedRefusals(): Promise<void> {
  try {
    const alarm = await readCodeRefusalAlarm(CODE_REFUSAL_FAILURES);
    if (alarm.raised) {
      logger.error(
        { refusals: alarm.refusals, redirectUri: env().OAUTH_REDIRECT_URI },
        "the identity provider keeps refusing fresh authorization codes (invalid_grant): check that OAUTH_REDIRECT_URI is exactly the redirect_uri registered with the service",
      );
    }
  } catch {
    // Best effort: the operator's page does not depend on it.
  }
}
