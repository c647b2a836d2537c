// Minting and looking up opaque codes and tokens. The clear value goes to the client once;
// the state keeps sha256(value) only, so a leaked state.json holds no usable credential.
import type { SandboxContext } from "../context.js";
import { randomString, sha256Hex } from "../crypto.js";
import { ACCESS_TOKEN_TTL_MS, AUTHORIZATION_CODE_TTL_MS, REFRESH_TOKEN_TTL_MS } from "../lifetimes.js";
import type { ChainRevocationReason, CodeRecord, TokenRecord } from "../store.js";

export const ACCESS_TOKEN_PREFIX = "volt_at_";
export const REFRESH_TOKEN_PREFIX = "volt_rt_";
export const AUTHORIZATION_CODE_PREFIX = "volt_ac_";

/**
 * Issues a code. It starts a chain of its own (Hydra: one chain per consent), or, with the
 * shared-grant switch (idp/behaviour.ts, README decision 54), joins the install's live chain, as
 * panva's oidc-provider joins the consents of one session into one grant: then revoking any refresh
 * token of the grant also ends the pair this code gives. `joinedChain` says which happened.
 */
export function issueAuthorizationCode(
  ctx: SandboxContext,
  grant: { clientId: string; redirectUri: string; scopes: string[]; installId: number; handshake?: string | null },
): { code: string; joinedChain: boolean } {
  const code = `${AUTHORIZATION_CODE_PREFIX}${randomString(32)}`;
  const now = ctx.clock.nowMs();
  const live = ctx.idpBehaviour.sharedGrant ? ctx.store.liveChainOfInstall(grant.installId) : undefined;
  const chainId = live?.chainId ?? `chain_${randomString(12)}`;
  const record: CodeRecord = {
    clientId: grant.clientId,
    redirectUri: grant.redirectUri,
    installId: grant.installId,
    scopes: [...grant.scopes],
    chainId,
    issuedAtMs: now,
    expiresAtMs: now + AUTHORIZATION_CODE_TTL_MS,
    usedAtMs: null,
  };
  ctx.store.state.codes[sha256Hex(code)] = record;
  if (live) {
    // The grant now answers for the newest consent: its token call and API calls name that handshake (decision 52).
    if (grant.handshake) live.chain.handshake = grant.handshake;
    ctx.store.changed();
    return { code, joinedChain: true };
  }
  // The chain (fosite's request ID) starts with the code; token-stats reports on the install's newest one.
  // The chain remembers its handshake, so the token call and the API calls of the code's tokens name it (decision 52).
  ctx.store.state.chains[chainId] = {
    installId: grant.installId,
    createdAtMs: now,
    revokedAtMs: null,
    revokedReason: null,
    ...(grant.handshake ? { handshake: grant.handshake } : {}),
  };
  ctx.store.changed();
  return { code, joinedChain: false };
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
}

/** The handshake whose code started this chain (README decision 52), or null (bulk installs, older state). */
export function handshakeOfChain(ctx: SandboxContext, chainId: string): string | null {
  return ctx.store.state.chains[chainId]?.handshake ?? null;
}

/** Mints an access token and a refresh token in the given chain (offline_access is always granted here). */
export function issueTokenPair(
  ctx: SandboxContext,
  grant: { chainId: string; clientId: string; installId: number; scopes: string[] },
): IssuedTokens {
  const accessToken = `${ACCESS_TOKEN_PREFIX}${randomString(32)}`;
  const refreshToken = `${REFRESH_TOKEN_PREFIX}${randomString(32)}`;
  const now = ctx.clock.nowMs();
  const base = { chainId: grant.chainId, clientId: grant.clientId, installId: grant.installId, scopes: [...grant.scopes], issuedAtMs: now, status: "active" as const };
  ctx.store.state.tokens[sha256Hex(accessToken)] = { ...base, kind: "access", expiresAtMs: now + ACCESS_TOKEN_TTL_MS };
  ctx.store.state.tokens[sha256Hex(refreshToken)] = { ...base, kind: "refresh", expiresAtMs: now + REFRESH_TOKEN_TTL_MS };
  ctx.store.changed();
  return { accessToken, refreshToken };
}

export function findToken(ctx: SandboxContext, value: string, kind: TokenRecord["kind"]): { hash: string; token: TokenRecord } | undefined {
  const hash = sha256Hex(value);
  const token = ctx.store.state.tokens[hash];
  return token && token.kind === kind ? { hash, token } : undefined;
}

/** A successful refresh revokes every earlier access token of the grant at once (public-facts). Returns how many. */
export function revokeAccessTokensOfChain(ctx: SandboxContext, chainId: string): number {
  let revoked = 0;
  for (const [, token] of ctx.store.tokensOfChain(chainId)) {
    if (token.status === "active" && token.kind === "access") {
      token.status = "revoked";
      revoked += 1;
    }
  }
  ctx.store.changed();
  return revoked;
}

export interface ChainRevocation {
  /** Tokens that were still active and are now revoked. */
  tokensRevoked: number;
  /** true when this call revoked the chain (false when it was revoked already). */
  firstRevocation: boolean;
}

/** Revokes every refresh and access token of a chain and records why (token-stats, README decision 21). */
export function revokeChain(ctx: SandboxContext, chainId: string, reason: ChainRevocationReason): ChainRevocation {
  let tokensRevoked = 0;
  let installId: number | null = null;
  for (const [, token] of ctx.store.tokensOfChain(chainId)) {
    installId = token.installId;
    if (token.status === "active") {
      token.status = "revoked";
      tokensRevoked += 1;
    }
  }
  let chain = ctx.store.state.chains[chainId];
  if (!chain && installId !== null) {
    // A chain from a state file written before chains were recorded.
    chain = { installId, createdAtMs: 0, revokedAtMs: null, revokedReason: null };
    ctx.store.state.chains[chainId] = chain;
  }
  const firstRevocation = chain !== undefined && chain.revokedAtMs === null;
  if (chain && firstRevocation) {
    chain.revokedAtMs = ctx.clock.nowMs();
    chain.revokedReason = reason;
  }
  ctx.store.changed();
  return { tokensRevoked, firstRevocation };
}

/** Marks every chain of an uninstalled install revoked (its tokens are deleted separately). */
export function markChainsOfInstallRevoked(ctx: SandboxContext, installId: number): void {
  for (const chain of ctx.store.chainsOfInstall(installId)) {
    if (chain.revokedAtMs === null) {
      chain.revokedAtMs = ctx.clock.nowMs();
      chain.revokedReason = "install_revoked";
    }
  }
  ctx.store.changed();
}
