// The token vault: the one module that writes and reads OAuth tokens in clear text.
//
// Tokens are sealed with AES-256-GCM (lib/oauth/token-crypto.ts) before they touch the database,
// bound to the install row they belong to. Other modules get an access token from here for one
// API call and never store, log or return it. Every update is a compare-and-set on `version`.
import "server-only";
import type { Tx } from "@/lib/db/client";
import type { InstallStatus } from "@/lib/db/generated/enums";
import { env } from "@/lib/env";
import { openToken, sealToken, sealedKeyId } from "./token-crypto";
import type { TokenSet } from "./token-endpoint";

/** contract §8: refresh tokens live 30 days. The token response does not say so; the contract does. */
export const REFRESH_TOKEN_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

export type StoredAccessToken = {
  accessToken: string;
  expiresAt: Date;
  /** The grant's compare-and-set version at the time of reading. */
  version: number;
};

export type GrantForUse = StoredAccessToken & {
  installStatus: InstallStatus;
  /** Set while a refresh is in flight, or after one whose outcome is unknown. */
  refreshStartedAt: Date | null;
  /** Set when that unknown outcome could not be settled and the app serves on this token until it expires (A185). */
  refreshAnswerLostAt: Date | null;
};

function sealAccessToken(installRowId: string, tokens: TokenSet, issuedAt: Date) {
  return {
    accessTokenEncrypted: sealToken(tokens.accessToken, installRowId, env().TOKEN_ENCRYPTION_KEYS),
    // `issuedAt` is when the request was sent, so the recorded expiry errs early.
    accessTokenExpiresAt: new Date(issuedAt.getTime() + tokens.expiresIn * 1000),
    // A refresh answer that does not state its scope did not change it (RFC 6749 §5.1): keep the stored one.
    ...(tokens.scopes === undefined ? {} : { scope: tokens.scopes.join(" ") }),
  };
}

function sealRefreshToken(installRowId: string, refreshToken: string, issuedAt: Date) {
  return {
    refreshTokenEncrypted: sealToken(refreshToken, installRowId, env().TOKEN_ENCRYPTION_KEYS),
    refreshTokenExpiresAt: new Date(issuedAt.getTime() + REFRESH_TOKEN_LIFETIME_MS),
  };
}

/**
 * Stores the token pair of a new consent (the redirect_uri), replacing any earlier pair: a
 * re-authorized install starts a new chain, so an old refresh marker no longer applies. Returns
 * whether it ended a lost refresh answer's wait for the operator's reconnect (A185).
 */
export async function storeTokenGrant(tx: Tx, installRowId: string, tokens: TokenSet & { scopes: string[] }, issuedAt: Date): Promise<boolean> {
  const { count: reconnected } = await tx.tokenGrant.updateMany({ where: { installRowId, refreshAnswerLostAt: { not: null } }, data: { refreshAnswerLostAt: null } });
  const sealed = {
    scope: tokens.scopes.join(" "),
    ...sealAccessToken(installRowId, tokens, issuedAt),
    ...(tokens.refreshToken
      ? sealRefreshToken(installRowId, tokens.refreshToken, issuedAt)
      : { refreshTokenEncrypted: null, refreshTokenExpiresAt: null }),
  };
  await tx.tokenGrant.upsert({
    where: { installRowId },
    create: { installRowId, ...sealed },
    update: { ...sealed, version: { increment: 1 }, refreshStartedAt: null },
  });
  return reconnected === 1;
}

/**
 * Stores the pair a refresh returned, if the grant is still at `observedVersion` and still carries
 * this refresh's marker (`sentAt`): a grant that moved on, or whose marker someone else settled,
 * is not overwritten. Clears the marker in the same write.
 */
export async function storeRefreshedTokens(
  tx: Tx,
  installRowId: string,
  observedVersion: number,
  sentAt: Date,
  tokens: TokenSet,
  issuedAt: Date,
): Promise<boolean> {
  const sealed = {
    ...sealAccessToken(installRowId, tokens, issuedAt),
    // An answer without a new refresh token did not rotate it: keep the stored one.
    ...(tokens.refreshToken ? sealRefreshToken(installRowId, tokens.refreshToken, issuedAt) : {}),
  };
  const { count } = await tx.tokenGrant.updateMany({
    where: { installRowId, version: observedVersion, refreshStartedAt: sentAt },
    data: { ...sealed, version: { increment: 1 }, refreshStartedAt: null, lastRefreshedAt: issuedAt },
  });
  return count === 1;
}

/** Durably records that a refresh of `version` is about to be sent. False if the grant moved on. */
export async function markRefreshStarted(tx: Tx, installRowId: string, version: number, at: Date): Promise<boolean> {
  const { count } = await tx.tokenGrant.updateMany({
    where: { installRowId, version, refreshStartedAt: null },
    data: { refreshStartedAt: at },
  });
  return count === 1;
}

/** The refresh's outcome is known (and nothing new was issued): the refresh token may be used again. */
export async function clearRefreshMarker(tx: Tx, installRowId: string): Promise<void> {
  await tx.tokenGrant.updateMany({ where: { installRowId }, data: { refreshStartedAt: null } });
}

/**
 * An earlier refresh's outcome is unknown and nothing can prove it never happened (A185): its token is
 * never sent again. True when this call set it (the alert is raised once).
 */
export async function markRefreshAnswerLost(tx: Tx, installRowId: string, version: number): Promise<boolean> {
  const { count } = await tx.tokenGrant.updateMany({ where: { installRowId, version, refreshAnswerLostAt: null }, data: { refreshAnswerLostAt: new Date() } });
  return count === 1;
}

/** The install's current access token with its install's status, or null when it has no grant. */
export async function readGrantForUse(tx: Tx, installRowId: string): Promise<GrantForUse | null> {
  const grant = await tx.tokenGrant.findUnique({
    where: { installRowId },
    select: {
      accessTokenEncrypted: true,
      accessTokenExpiresAt: true,
      version: true,
      refreshStartedAt: true,
      refreshAnswerLostAt: true,
      install: { select: { status: true } },
    },
  });
  if (!grant) return null;
  return {
    accessToken: openToken(grant.accessTokenEncrypted, installRowId, env().TOKEN_ENCRYPTION_KEYS),
    expiresAt: grant.accessTokenExpiresAt,
    version: grant.version,
    refreshStartedAt: grant.refreshStartedAt,
    refreshAnswerLostAt: grant.refreshAnswerLostAt,
    installStatus: grant.install.status,
  };
}

/**
 * The grant as the refresh coordinator reads it under the install's lock (lib/oauth/refresh.ts): what
 * readGrantForUse returns and the refresh token, in one statement, since the coordinator needs both
 * and nothing but the lock's holder can move the grant on between two reads. The refresh token is
 * opened only when asked for (a refresh someone else already did never needs it).
 */
export async function readGrantForRefresh(
  tx: Tx,
  installRowId: string,
): Promise<(GrantForUse & { openRefreshToken: () => string | null }) | null> {
  // One statement, the install's status joined in (Prisma's `select` of the relation would be a second).
  const [grant] = await tx.$queryRaw<
    { access_token_encrypted: string; refresh_token_encrypted: string | null; access_token_expires_at: Date; version: number; refresh_started_at: Date | null; refresh_answer_lost_at: Date | null; status: InstallStatus }[]
  >`
    SELECT g.access_token_encrypted, g.refresh_token_encrypted, g.access_token_expires_at, g.version, g.refresh_started_at, g.refresh_answer_lost_at, i.status::text AS status
    FROM token_grants g JOIN installs i ON i.id = g.install_row_id
    WHERE g.install_row_id = ${installRowId}::uuid`;
  if (!grant) return null;
  const keys = env().TOKEN_ENCRYPTION_KEYS;
  return {
    accessToken: openToken(grant.access_token_encrypted, installRowId, keys),
    expiresAt: grant.access_token_expires_at,
    version: grant.version,
    refreshStartedAt: grant.refresh_started_at,
    refreshAnswerLostAt: grant.refresh_answer_lost_at,
    installStatus: grant.status,
    openRefreshToken: () => (grant.refresh_token_encrypted ? openToken(grant.refresh_token_encrypted, installRowId, keys) : null),
  };
}

/**
 * The install's current refresh token, or null. Only the refresh coordinator sends it; the redirect_uri
 * reads it to revoke the chain a new consent replaces (lib/installs/connect.ts).
 */
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

/**
 * Re-seals every stored token under the current key (the first of TOKEN_ENCRYPTION_KEYS), so an
 * old key can then be removed. Each row is a compare-and-set: a grant refreshed meanwhile already
 * uses the current key and is skipped.
 */
export async function reencryptAllGrants(tx: Tx): Promise<{ checked: number; reencrypted: number }> {
  const keys = env().TOKEN_ENCRYPTION_KEYS;
  const currentKeyId = keys[0]!.id;
  const grants = await tx.tokenGrant.findMany({
    select: { installRowId: true, version: true, accessTokenEncrypted: true, refreshTokenEncrypted: true },
  });
  let reencrypted = 0;
  for (const grant of grants) {
    const stale = [grant.accessTokenEncrypted, grant.refreshTokenEncrypted].some((v) => v !== null && sealedKeyId(v) !== currentKeyId);
    if (!stale) continue;
    const reseal = (sealed: string) => sealToken(openToken(sealed, grant.installRowId, keys), grant.installRowId, keys);
    const { count } = await tx.tokenGrant.updateMany({
      // Not a new token pair, so `version` stays: only the ciphertext changes.
      where: { installRowId: grant.installRowId, version: grant.version, accessTokenEncrypted: grant.accessTokenEncrypted },
      data: {
        accessTokenEncrypted: reseal(grant.accessTokenEncrypted),
        refreshTokenEncrypted: grant.refreshTokenEncrypted ? reseal(grant.refreshTokenEncrypted) : null,
      },
    });
    reencrypted += count;
  }
  return { checked: grants.length, reencrypted };
}
