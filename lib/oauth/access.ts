// Calling the partner API on behalf of an install: the only way the app uses an access token.
//
//   withAccessToken(installRowId, (token, call) => fetchSomething(token, call))
//
// (`call` names the install whose rate budget pays for the request, its priority and deadline:
// lib/partner-api/client.ts),
// reads the install's grant, refuses installs the app must not call (revoked, flagged, chain
// gone), refreshes a token that is about to expire, and after a 401 re-reads the store before
// anything else, because another request or instance may already have rotated the grant.
import "server-only";
import { randomInt } from "node:crypto";
import { db } from "@/lib/db/client";
import { flagNeedsReauth, transitionInstall } from "@/lib/installs/state";
import { logger } from "@/lib/log";
import { PartnerApiError, callFor, type ApiCall } from "@/lib/partner-api/client";
import type { Priority } from "@/lib/partner-api/budget";
import { NoUsableTokenError } from "./errors";
import { noUsableTokenReason, refreshInstallTokens } from "./refresh";
import { readGrantForUse, type GrantForUse } from "./token-vault";

/**
 * Refresh this long before the access token expires (contract §4.1: refresh before expiry), plus
 * up to a minute of jitter so installs issued together do not all refresh in the same second.
 */
const EXPIRY_MARGIN_MS = 2 * 60 * 1000;
const EXPIRY_JITTER_MS = 60 * 1000;

function isUnauthorized(error: unknown): boolean {
  return error instanceof PartnerApiError && error.kind === "unauthorized";
}

export type AccessOptions = {
  /**
   * Use the token of an install flagged NEEDS_REAUTH. Only the probe that checks whether the
   * operator re-consented passes this (contract §7: otherwise stop calling the API for it).
   */
  probeFlagged?: boolean;
  /**
   * Whose call this is (lib/partner-api/budget.ts): "interactive" (the default) for a page an
   * operator is waiting for, "background" for sweeps and sync, which leave a reserve for pages.
   */
  priority?: Priority;
};

type ApiUse<T> = (accessToken: string, call: ApiCall) => Promise<T>;

async function usableGrant(installRowId: string, options: AccessOptions): Promise<GrantForUse> {
  const grant = await readGrantForUse(db(), installRowId);
  if (!grant) throw new NoUsableTokenError("no_grant");
  const unusable = noUsableTokenReason(grant.installStatus);
  if (unusable && !(unusable === "needs_reauth" && options.probeFlagged)) throw new NoUsableTokenError(unusable);
  return grant;
}

export async function withAccessToken<T>(installRowId: string, apiUse: ApiUse<T>, options: AccessOptions = {}): Promise<T> {
  // One deadline for the whole use: a refresh and a retry after a 401 come out of it too.
  const apiCall = callFor(installRowId, options.priority);
  const call = (accessToken: string) => apiUse(accessToken, apiCall);
  try {
    return await callWithFreshToken(installRowId, call, options);
  } catch (error) {
    // contract §7: NEEDS_REAUTH flags the install, whichever call met it, and the app stops
    // calling the API for it. Other 403s are the caller's business (e.g. a scope not granted).
    if (error instanceof PartnerApiError && error.kind === "needs_reauth" && !options.probeFlagged) {
      await flagNeedsReauth(installRowId, error.detail.reauthUrl ?? null, "api");
    }
    throw error;
  }
}

async function callWithFreshToken<T>(installRowId: string, call: (accessToken: string) => Promise<T>, options: AccessOptions): Promise<T> {
  const grant = await usableGrant(installRowId, options);
  const refreshAt = grant.expiresAt.getTime() - EXPIRY_MARGIN_MS - randomInt(EXPIRY_JITTER_MS);
  // A refresh in flight elsewhere (or an unsettled one) does not stop the use of a token that is
  // still valid: if that refresh did happen, this token gets a 401, and the path below re-reads.
  // After a lost refresh answer nothing could settle, the token serves as it is until it expires
  // (lib/oauth/refresh.ts, rule 3): nothing to refresh, so no lock is taken for it.
  const servingUntilReconnect = grant.refreshAnswerLostAt !== null && grant.expiresAt.getTime() > Date.now();
  const token = Date.now() >= refreshAt && !servingUntilReconnect ? await refreshInstallTokens(installRowId, grant.version) : grant;
  try {
    return await call(token.accessToken);
  } catch (error) {
    if (!isUnauthorized(error)) throw error;
  }

  // A 401 (contract §7: expired or revoked). Re-read first: if the grant moved on, use the new token.
  const reread = await usableGrant(installRowId, options);
  const next = reread.version !== token.version ? reread : await refreshInstallTokens(installRowId, token.version);
  try {
    return await call(next.accessToken);
  } catch (error) {
    if (!isUnauthorized(error)) throw error;
    // A token that was just issued is refused: the install is gone at the service. Stop here
    // rather than refresh again (contract §7: if refresh fails, the operator must re-install).
    await db().$transaction((tx) => transitionInstall(tx, installRowId, "REINSTALL_NEEDED", "api", "401 with a freshly refreshed token"));
    logger.warn({ installRowId }, "the API refused a fresh token; the install needs a re-install");
    throw new NoUsableTokenError("reinstall_needed");
  }
}
