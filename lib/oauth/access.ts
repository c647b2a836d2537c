// Calling the partner API on behalf of an install: the only way the app uses an access token.
//
//   withAccessToken(installRowId, (token) => fetchSomething(token))
//
// reads the current token from the vault, refreshes it first when it is about to expire, and after
// a 401 re-reads the store before anything else (another request may already have rotated it).
// contract §3: presenting a used refresh token revokes the whole chain, so a refresh token is
// only ever sent under the grant's row lock, after re-reading the grant (lib/oauth/refresh.ts).
import "server-only";
import { db } from "@/lib/db/client";
import { PartnerApiError } from "@/lib/partner-api/client";
import { NoUsableTokenError } from "./errors";
import { refreshInstallTokens } from "./refresh";
import { readAccessToken } from "./token-vault";

/** Refresh this long before the access token expires (contract §4.1: refresh before expiry). */
const EXPIRY_MARGIN_MS = 2 * 60 * 1000;

async function currentToken(installRowId: string) {
  const stored = await readAccessToken(db(), installRowId);
  if (!stored) throw new NoUsableTokenError("no_grant");
  return stored;
}

export async function withAccessToken<T>(installRowId: string, call: (accessToken: string) => Promise<T>): Promise<T> {
  let stored = await currentToken(installRowId);
  if (stored.expiresAt.getTime() - Date.now() < EXPIRY_MARGIN_MS) {
    stored = await refreshInstallTokens(installRowId, stored.version);
  }
  try {
    return await call(stored.accessToken);
  } catch (error) {
    if (!(error instanceof PartnerApiError) || error.kind !== "unauthorized") throw error;
    // A 401: first re-read, since another request or instance may have rotated the grant.
    const reread = await currentToken(installRowId);
    const next = reread.version !== stored.version ? reread : await refreshInstallTokens(installRowId, stored.version);
    return call(next.accessToken);
  }
}
