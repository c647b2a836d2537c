// The token vault: the one module that writes and reads OAuth tokens in clear text.
//
// Tokens are sealed with AES-256-GCM (lib/oauth/token-crypto.ts) before they touch the database,
// bound to the install row they belong to. Other modules get an access token from here for one
// API call and never store, log or return it.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { openToken, sealToken } from "./token-crypto";
import type { TokenSet } from "./token-endpoint";

/** contract §8: refresh tokens live 30 days. The token response does not say so; the contract does. */
export const REFRESH_TOKEN_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

export type StoredAccessToken = {
  accessToken: string;
  expiresAt: Date;
  /** The grant's compare-and-set version at the time of reading. */
  version: number;
};

/**
 * Stores a freshly issued token pair for an install, replacing any earlier pair (a re-authorized
 * install starts a new chain). `issuedAt` is when the request was sent, so expiry errs early.
 */
export async function storeTokenGrant(tx: Tx, installRowId: string, tokens: TokenSet, issuedAt: Date): Promise<void> {
  const keys = env().TOKEN_ENCRYPTION_KEYS;
  const sealed = {
    accessTokenEncrypted: sealToken(tokens.accessToken, installRowId, keys),
    refreshTokenEncrypted: tokens.refreshToken ? sealToken(tokens.refreshToken, installRowId, keys) : null,
    accessTokenExpiresAt: new Date(issuedAt.getTime() + tokens.expiresIn * 1000),
    refreshTokenExpiresAt: tokens.refreshToken ? new Date(issuedAt.getTime() + REFRESH_TOKEN_LIFETIME_MS) : null,
    scope: tokens.scopes.join(" "),
  };
  await tx.tokenGrant.upsert({
    where: { installRowId },
    create: { installRowId, ...sealed },
    update: { ...sealed, version: { increment: 1 } },
  });
}

/** The install's current access token, or null when the install has no grant. */
export async function readAccessToken(tx: Tx, installRowId: string): Promise<StoredAccessToken | null> {
  const grant = await tx.tokenGrant.findUnique({
    where: { installRowId },
    select: { accessTokenEncrypted: true, accessTokenExpiresAt: true, version: true },
  });
  if (!grant) return null;
  return {
    accessToken: openToken(grant.accessTokenEncrypted, installRowId, env().TOKEN_ENCRYPTION_KEYS),
    expiresAt: grant.accessTokenExpiresAt,
    version: grant.version,
  };
}

/** The install's current refresh token, or null. Only the refresh coordinator calls this. */
export async function readRefreshToken(tx: Tx, installRowId: string): Promise<{ refreshToken: string; version: number } | null> {
  const grant = await tx.tokenGrant.findUnique({
    where: { installRowId },
    select: { refreshTokenEncrypted: true, version: true },
  });
  if (!grant?.refreshTokenEncrypted) return null;
  return {
    refreshToken: openToken(grant.refreshTokenEncrypted, installRowId, env().TOKEN_ENCRYPTION_KEYS),
    version: grant.version,
  };
}
