// What the app has seen the identity provider do after a refresh (docs/spec-gaps.md A186): does the
// access token a refresh replaced stop working (Hydra: public-facts.md), or live out its hour (RFC
// 6749 §6 allows it; panva's oidc-provider)? Only where it stops is a working old token proof that a
// lost refresh never happened (lib/oauth/refresh.ts, rule 3). The contract does not say, so the app
// looks: after a successful refresh, once a day, one process calls GET /consumers/me with the token
// the refresh replaced. Until it has looked, it knows nothing, and the probe proves nothing.
import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { PartnerApiError, callFor, fetchConsumer } from "@/lib/partner-api/client";
import type { StoredAccessToken } from "./token-vault";

export type OldAccessTokens = "revoked" | "kept";

/** How long one look stands before the next successful refresh looks again (a server's setting can change). */
const LOOK_AGAIN_AFTER_MS = 24 * 60 * 60 * 1000;

/** What the app last saw the issuer do with a replaced access token, or null when it never looked. */
export async function oldAccessTokensAfterRefresh(): Promise<OldAccessTokens | null> {
  const row = await db().issuerFact.findUnique({ where: { issuer: env().OAUTH_ISSUER }, select: { oldAccessTokens: true } });
  const seen = row?.oldAccessTokens;
  return seen === "revoked" || seen === "kept" ? seen : null;
}

/**
 * Called after a refresh replaced `previous`: when the issuer's fact is missing or a day old, looks
 * whether `previous` still works. Claimed by compare-and-set, so a storm of refreshes costs one call.
 * Never fails the refresh: a look that tells nothing (a 429, a timeout) is simply not recorded.
 */
export async function lookAtReplacedAccessToken(installRowId: string, previous: Pick<StoredAccessToken, "accessToken" | "expiresAt">): Promise<void> {
  // A token that expired by now says nothing about the refresh.
  if (previous.expiresAt.getTime() <= Date.now() + 5_000) return;
  const issuer = env().OAUTH_ISSUER;
  try {
    const claimed = await db().$queryRaw<{ issuer: string }[]>`
      INSERT INTO issuer_facts (issuer, claimed_at) VALUES (${issuer}, now())
      ON CONFLICT (issuer) DO UPDATE SET claimed_at = now()
      WHERE (issuer_facts.observed_at IS NULL OR issuer_facts.observed_at < now() - ${LOOK_AGAIN_AFTER_MS} * interval '1 millisecond')
        AND (issuer_facts.claimed_at IS NULL OR issuer_facts.claimed_at < now() - interval '1 minute')
      RETURNING issuer`;
    if (claimed.length === 0) return;
    let seen: OldAccessTokens | null = null;
    try {
      await fetchConsumer(previous.accessToken, callFor(installRowId, "background"));
      seen = "kept";
    } catch (error) {
      if (error instanceof PartnerApiError && error.kind === "unauthorized") seen = "revoked";
      // 403 NEEDS_REAUTH is given to a valid token only (as the settle probe reads it).
      if (error instanceof PartnerApiError && error.kind === "needs_reauth") seen = "kept";
    }
    await db().issuerFact.update({ where: { issuer }, data: { claimedAt: null, ...(seen ? { oldAccessTokens: seen, observedAt: new Date() } : {}) } });
    if (seen) logger.info({ oldAccessTokens: seen }, "looked at an access token a refresh replaced: the identity provider " + (seen === "revoked" ? "revokes it" : "keeps it valid"));
  } catch (error) {
    logger.warn({ err: error }, "could not look at an access token a refresh replaced; the next refresh looks again");
  }
}
