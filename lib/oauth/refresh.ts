// The refresh coordinator: at most one refresh per install at a time, across requests, processes
// and instances, because the identity provider revokes the whole chain when a used refresh token
// is presented again (contract §3, public-facts.md).
//
// How: the grant's row is locked (SELECT ... FOR UPDATE) for the length of the refresh. Whoever
// gets the lock re-reads the grant; if its version moved on since the caller read it, another
// refresher already rotated it and the new token is simply used. Otherwise this one refreshes and
// commits the new pair before releasing the lock, so no one can read the old refresh token again.
import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";
import { transitionInstall } from "@/lib/installs/state";
import { NoUsableTokenError } from "./errors";
import { TokenEndpointError, requestTokenRefresh } from "./token-endpoint";
import { readAccessToken, readRefreshToken, storeTokenGrant, type StoredAccessToken } from "./token-vault";

/** Longer than the token endpoint's own timeout, so the lock outlives the request it protects. */
const REFRESH_TRANSACTION_TIMEOUT_MS = 30_000;

export async function refreshInstallTokens(installRowId: string, observedVersion: number): Promise<StoredAccessToken> {
  const outcome = await db().$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT 1 FROM token_grants WHERE install_row_id = ${installRowId}::uuid FOR UPDATE`;
      const current = await readRefreshToken(tx, installRowId);
      if (!current) return { kind: "failed" as const, reason: "no refresh token stored" };
      if (current.version !== observedVersion) {
        const rotated = await readAccessToken(tx, installRowId);
        if (rotated) return { kind: "ok" as const, token: rotated };
      }
      const issuedAt = new Date();
      try {
        const tokens = await requestTokenRefresh(current.refreshToken);
        await storeTokenGrant(tx, installRowId, tokens, issuedAt);
      } catch (error) {
        if (error instanceof TokenEndpointError && error.kind === "invalid_grant") {
          // contract §7: refresh failed (token replayed or install revoked): the operator must re-install.
          await transitionInstall(tx, installRowId, "REINSTALL_NEEDED", "refresh", "refresh token rejected (invalid_grant)");
          return { kind: "failed" as const, reason: "refresh rejected" };
        }
        throw error;
      }
      const fresh = await readAccessToken(tx, installRowId);
      return fresh ? { kind: "ok" as const, token: fresh } : { kind: "failed" as const, reason: "grant vanished" };
    },
    { timeout: REFRESH_TRANSACTION_TIMEOUT_MS, maxWait: REFRESH_TRANSACTION_TIMEOUT_MS },
  );
  if (outcome.kind === "failed") {
    logger.warn({ installRowId, reason: outcome.reason }, "token refresh failed; the install needs a re-install");
    throw new NoUsableTokenError("reinstall_needed");
  }
  return outcome.token;
}
