// Switches that make the identity provider behave like another standards-compliant OAuth 2.0 server
// instead of Hydra, or like one that is away (control API: GET/POST /_sandbox/idp-behaviour). The
// contract names no product: an app must cope with any server that follows RFC 6749 / RFC 9207.
// In memory only: a restart or POST /_sandbox/reset restores the defaults (Hydra's behaviour).
import { z } from "zod";

/**
 * How the discovery document answers: "up", 503 (the issuer is down), or 404 (what a misspelt
 * issuer path gets from a real server).
 */
export const DISCOVERY_MODES = ["up", "503", "404"] as const;
/** `hydra`: fosite's error_description with its hints; `generic`: plain RFC 6749 errors, one fixed text. */
export const ERROR_WORDINGS = ["hydra", "generic"] as const;
/**
 * RFC 9207 `iss` in the authorization response (the redirect to the app): `send` (as Hydra does),
 * `omit` (still advertised in discovery, so a careful client must refuse), or `wrong` (another issuer's).
 */
export const ISS_MODES = ["send", "omit", "wrong"] as const;

export interface IdpBehaviour {
  discovery: (typeof DISCOVERY_MODES)[number];
  errorWording: (typeof ERROR_WORDINGS)[number];
  iss: (typeof ISS_MODES)[number];
  /** Token responses (both grants) without `scope`: RFC 6749 §5.1 allows it when the scope is as requested. */
  omitScope: boolean;
  /** Token responses without `expires_in`: RFC 6749 §5.1 only RECOMMENDS it. */
  omitExpiresIn: boolean;
  /**
   * Consents in one session share one grant (panva's oidc-provider does this): a new code for an
   * install that still has a live chain joins that chain, so revoking any refresh token of it
   * (RFC 7009) ends every token of the grant, the pair the new code gave included. Off (Hydra):
   * every code starts a chain of its own (README decision 54).
   */
  sharedGrant: boolean;
  /**
   * Earlier access tokens stay valid after a refresh until they expire (RFC 6749 §6 lets a server
   * keep them). Off (Hydra): a successful refresh revokes every earlier access token of the grant
   * (public-facts.md), so a working old access token proves the refresh never happened; on, it
   * proves nothing (README decision 55).
   */
  oldAccessTokensStayValid: boolean;
}

export const DEFAULT_IDP_BEHAVIOUR: Readonly<IdpBehaviour> = Object.freeze({
  discovery: "up",
  errorWording: "hydra",
  iss: "send",
  omitScope: false,
  omitExpiresIn: false,
  sharedGrant: false,
  oldAccessTokensStayValid: false,
});

/** A partial change: only the fields given are switched. */
export const idpBehaviourPatchSchema = z
  .object({
    discovery: z.enum(DISCOVERY_MODES),
    errorWording: z.enum(ERROR_WORDINGS),
    iss: z.enum(ISS_MODES),
    omitScope: z.boolean(),
    omitExpiresIn: z.boolean(),
    sharedGrant: z.boolean(),
    oldAccessTokensStayValid: z.boolean(),
  })
  .partial()
  .strict();

/** The error_description a generic server gives for every error: nothing a client could match on. */
export const GENERIC_ERROR_DESCRIPTION = "The request was refused.";

/** The issuer sent in `iss` when it is switched to `wrong`. */
export const WRONG_ISSUER = "https://idp.example.invalid/other-issuer";

export function defaultIdpBehaviour(): IdpBehaviour {
  return { ...DEFAULT_IDP_BEHAVIOUR };
}

/**
 * The `iss` to add to an authorization response (RFC 9207 §2), or null to leave it out. Every
 * authorization response carries it, error responses included.
 */
export function authorizationResponseIssuer(behaviour: IdpBehaviour, issuer: string): string | null {
  switch (behaviour.iss) {
    case "send":
      return issuer;
    case "wrong":
      return WRONG_ISSUER;
    case "omit":
      return null;
  }
}
