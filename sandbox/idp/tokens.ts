// Minting and looking up opaque codes and tokens. The clear value goes to the client once;
// the state keeps sha256(value) only, so a leaked state.json holds no usable credential.
import type { SandboxContext } from "../context.js";
import { randomString, sha256Hex } from "../crypto.js";
import { ACCESS_TOKEN_TTL_MS, AUTHORIZATION_CODE_TTL_MS, REFRESH_TOKEN_TTL_MS } from "../lifetimes.js";
import type { CodeRecord, TokenRecord } from "../store.js";

export const ACCESS_TOKEN_PREFIX = "volt_at_";
export const REFRESH_TOKEN_PREFIX = "volt_rt_";
export const AUTHORIZATION_CODE_PREFIX = "volt_ac_";

export function issueAuthorizationCode(
  ctx: SandboxContext,
  grant: { clientId: string; redirectUri: string; scopes: string[]; installId: number },
): string {
  const code = `${AUTHORIZATION_CODE_PREFIX}${randomString(32)}`;
  const now = ctx.clock.nowMs();
  const record: CodeRecord = {
    ...grant,
    scopes: [...grant.scopes],
    chainId: `chain_${randomString(12)}`,
    issuedAtMs: now,
    expiresAtMs: now + AUTHORIZATION_CODE_TTL_MS,
    usedAtMs: null,
  };
  ctx.store.state.codes[sha256Hex(code)] = record;
  ctx.store.changed();
  return code;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
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

/** Revokes every still-active token of a chain; `kinds` narrows it (a refresh revokes only the old access tokens). */
export function revokeChain(ctx: SandboxContext, chainId: string, kinds: readonly TokenRecord["kind"][] = ["access", "refresh"]): number {
  let revoked = 0;
  for (const token of Object.values(ctx.store.state.tokens)) {
    if (token.chainId === chainId && token.status === "active" && kinds.includes(token.kind)) {
      token.status = "revoked";
      revoked += 1;
    }
  }
  ctx.store.changed();
  return revoked;
}
