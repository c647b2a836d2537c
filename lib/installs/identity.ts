// Which install and operator does a fresh access token belong to?
//
// The token response carries no install or operator id (public-facts.md). The service binds the
// install, operator and consumer to the token session (contract §1.4), and `GET /consumers/me`
// answers for that consumer. This is the one function that decides (docs/spec-gaps.md):
//   - operator: `operatorId` of /consumers/me (documented);
//   - install_id: an `installId` field of /consumers/me when the service sends one (undocumented),
//     otherwise unknown for now: lib/installs/register.ts binds it when install.created arrives
//     (or already did, if the webhook came first);
//   - the consumer (its createdAt and name, documented): tells installs apart meanwhile;
//   - the operator's name: an `operatorName` field when the service sends one (undocumented), never
//     the consumer's `name`.
import "server-only";
import { env } from "@/lib/env";
import { fetchConsumer } from "@/lib/partner-api/client";

export type TokenOwner = {
  operatorId: string;
  installId: number | null;
  /**
   * The consumer the token resolves to: each install has its own (contract §2), so this tells a
   * re-consent of one install from a new install when install_id is unknown. Null when the
   * service does not say when the consumer was created.
   */
  consumerKey: string | null;
  /** The operator's name, when the service states one (an undocumented `operatorName`); else null. */
  operatorName: string | null;
  /** The consumer's data scopes (public-facts.md: `scopes` of /consumers/me). */
  scopes: string[];
  /** The install's rate limit (contract §8), when the service states it: sizes its budget. */
  rateLimit: { quota: number; windowSeconds: number } | null;
};

export class TokenOwnerMismatchError extends Error {
  constructor() {
    super("the access token belongs to another client_id");
    this.name = "TokenOwnerMismatchError";
  }
}

export async function identifyTokenOwner(accessToken: string): Promise<TokenOwner> {
  // The install is not stored yet, so no budget pays for this one call (lib/partner-api/client.ts).
  const consumer = await fetchConsumer(accessToken, null);
  if (consumer.clientId !== undefined && consumer.clientId !== env().OAUTH_CLIENT_ID) {
    throw new TokenOwnerMismatchError();
  }
  return {
    operatorId: consumer.operatorId,
    installId: consumer.installId ?? null,
    consumerKey: consumer.createdAt ? `${consumer.createdAt}|${consumer.name ?? ""}` : null,
    // Never `name`: that names the consumer (the service may call it "<app> · <operator>"), and the
    // dashboard would present it as the operator's name (docs/spec-gaps.md).
    operatorName: consumer.operatorName ?? null,
    scopes: consumer.scopes,
    rateLimit:
      consumer.rateLimit !== undefined && consumer.rateLimitIntervalInSeconds !== undefined
        ? { quota: consumer.rateLimit, windowSeconds: consumer.rateLimitIntervalInSeconds }
        : null,
  };
}
