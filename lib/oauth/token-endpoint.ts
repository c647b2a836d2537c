// The app's OAuth client for the service's identity provider, built on openid-client.
//
// The app only ever talks to the token endpoint: the service builds the authorization request
// (contract §1.2-§1.3), so nothing here creates an authorization URL. Client authentication is
// client_secret_post and no PKCE is sent (contract §1.7, §5.2).
import "server-only";
import * as oidc from "openid-client";
import { z } from "zod";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { noteServiceDate } from "@/lib/partner-api/service-clock";

/**
 * contract §2: the access token lives one hour and `expires_in` is "just under one hour". Assumed
 * when a token response leaves `expires_in` out (RFC 6749 §5.1 only RECOMMENDS it); the refresh
 * margin of lib/oauth/access.ts applies on top, so the app refreshes well before this runs out.
 */
export const ASSUMED_EXPIRES_IN_SECONDS = 3599;

/**
 * contract §2 "Token response fields". Unknown fields are tolerated and dropped.
 *
 * The contract promises `expires_in` and `scope`, but they are the two fields RFC 6749 §5.1 lets a
 * server leave out, and the app can live without either (defence in depth): a missing `expires_in`
 * is assumed (above), a missing `scope` is left undefined for the caller to fill from what it knows
 * (the callback asks GET /consumers/me; a refresh keeps the scopes already stored). The code is spent
 * by the time this runs, so refusing the answer for them would lose an install for nothing.
 */
export const TokenResponseSchema = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  // contract: "Value is bearer"; the identity provider sends it in lower case, RFC 6749 says
  // the comparison is case-insensitive.
  token_type: z.string().refine((t) => t.toLowerCase() === "bearer", "token_type must be bearer"),
  expires_in: z.number().int().positive().optional(),
  scope: z.string().optional(),
});

export type TokenSet = {
  accessToken: string;
  refreshToken: string | undefined;
  /** Seconds the access token lives, as the identity provider said (or ASSUMED_EXPIRES_IN_SECONDS). */
  expiresIn: number;
  /** The granted scopes, or undefined when the response did not say (the caller decides). */
  scopes: string[] | undefined;
};

/**
 * RFC 9207: the authorization response (the redirect to the app) named no issuer although the
 * identity provider advertises that it always does, or named another issuer. Either can be a mix-up
 * attack (a code from another server, meant to be sent to this one) or a misconfigured OAUTH_ISSUER.
 * The code is NOT sent in either case.
 */
export class AuthorizationResponseIssuerError extends Error {
  constructor(readonly problem: "missing" | "wrong") {
    super(`authorization response issuer ${problem}`);
    this.name = "AuthorizationResponseIssuerError";
  }
}

/**
 * Why a token request failed, in the terms the app acts on (contract §7):
 * - `invalid_grant`: the code (or refresh token) is expired, used, or for another redirect_uri;
 * - `invalid_client`: the app's credentials are wrong or the client was removed;
 * - `invalid_request`: e.g. a concurrent refresh with the same token (public-facts.md);
 * - `unavailable`: no answer, a timeout, or a 5xx: the request may have been processed;
 * - `not_sent`: the connection was never made (refused, no DNS), or something in front of the
 *   identity provider turned it away: the request was not processed;
 * - `rejected`: another OAuth error refused the request as a whole (no token was spent);
 * - `bad_response`: an answer that is not a valid token response.
 */
export type TokenErrorKind =
  | "invalid_grant"
  | "invalid_client"
  | "invalid_request"
  | "unavailable"
  | "not_sent"
  | "rejected"
  | "bad_response"
  | "other";

export class TokenEndpointError extends Error {
  constructor(
    readonly kind: TokenErrorKind,
    /** The identity provider's `error_description`, never containing a secret. */
    readonly description: string | undefined,
    readonly status: number | undefined,
  ) {
    super(`token endpoint: ${kind}${description ? ` (${description})` : ""}`);
    this.name = "TokenEndpointError";
  }
}

function isLoopback(url: URL): boolean {
  return ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

/**
 * openid-client's requests (discovery, token requests), each answer's Date header noted: the
 * identity provider is the service too, and the callback and refreshes talk to it when no API call
 * happens (lib/partner-api/service-clock.ts).
 */
const fetchNotingTheClock: oidc.CustomFetch = async (url, options) => {
  const sentAtMs = Date.now();
  // The options are fetch's own, passed on as openid-client's documentation does; only the typing of
  // a Uint8Array body (ArrayBufferLike) is wider than RequestInit's.
  const response = await fetch(url, options as RequestInit);
  noteServiceDate(response.headers.get("Date"), "identity-provider", sentAtMs, Date.now());
  return response;
};

let configPromise: Promise<oidc.Configuration> | undefined;

/** Discovers the identity provider once per process (cached; retried after a failure). */
async function oauthConfiguration(): Promise<oidc.Configuration> {
  configPromise ??= (async () => {
    const { OAUTH_ISSUER, OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET, HTTP_TIMEOUT_MS } = env();
    const issuer = new URL(OAUTH_ISSUER);
    // openid-client refuses plain http. The local sandbox serves http on localhost, so allow it
    // there and only there: a production issuer must be https.
    const insecure = issuer.protocol === "http:";
    if (insecure && !isLoopback(issuer)) {
      throw new Error(`OAUTH_ISSUER must use https (plain http is allowed only for a loopback sandbox): ${issuer.origin}`);
    }
    const config = await oidc.discovery(
      issuer,
      OAUTH_CLIENT_ID,
      { token_endpoint_auth_method: "client_secret_post" },
      oidc.ClientSecretPost(OAUTH_CLIENT_SECRET),
      { execute: insecure ? [oidc.allowInsecureRequests] : [], timeout: Math.ceil(HTTP_TIMEOUT_MS / 1000), [oidc.customFetch]: fetchNotingTheClock },
    );
    config.timeout = Math.ceil(HTTP_TIMEOUT_MS / 1000);
    config[oidc.customFetch] = fetchNotingTheClock;
    return config;
  })();
  try {
    return await configPromise;
  } catch (error) {
    configPromise = undefined;
    throw toTokenEndpointError(error);
  }
}

function toTokenEndpointError(error: unknown): TokenEndpointError {
  if (error instanceof TokenEndpointError) return error;
  if (error instanceof oidc.ResponseBodyError) {
    if (error.status >= 500) return new TokenEndpointError("unavailable", error.error_description, error.status);
    const known = ["invalid_grant", "invalid_client", "invalid_request"] as const;
    // Any other OAuth error at 4xx (unsupported_grant_type, unauthorized_client, ...) refused the
    // request as a whole: no token was spent.
    const kind = (known as readonly string[]).includes(error.error) ? (error.error as TokenErrorKind) : "rejected";
    return new TokenEndpointError(kind, error.error_description, error.status);
  }
  if (error instanceof oidc.ClientError) {
    if (error.code === "OAUTH_TIMEOUT") return new TokenEndpointError("unavailable", "timed out", undefined);
    const cause = error.cause;
    const status = cause instanceof Response ? cause.status : undefined;
    if (status !== undefined && status >= 500) return new TokenEndpointError("unavailable", undefined, status);
    // A 4xx that is not an OAuth error body came from something in front of the identity provider
    // (a proxy, a WAF, a rate limiter): the request was turned away before it was processed.
    if (status !== undefined && status >= 400) return new TokenEndpointError("not_sent", `HTTP ${status} from in front of the identity provider`, status);
    return new TokenEndpointError("bad_response", error.message, status);
  }
  if (error instanceof TypeError) {
    // fetch throws TypeError for network failures. A refused connection or a failed DNS lookup
    // means the request never left; anything else (a reset, a closed socket) may have arrived.
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
      return new TokenEndpointError("not_sent", String(code), undefined);
    }
    return new TokenEndpointError("unavailable", "no answer", undefined);
  }
  return new TokenEndpointError("other", undefined, undefined);
}

function toTokenSet(response: unknown): TokenSet {
  const parsed = TokenResponseSchema.safeParse(response);
  if (!parsed.success) {
    throw new TokenEndpointError("bad_response", "the token response did not match the contract", undefined);
  }
  const t = parsed.data;
  return {
    accessToken: t.access_token,
    refreshToken: t.refresh_token,
    expiresIn: t.expires_in ?? ASSUMED_EXPIRES_IN_SECONDS,
    scopes: t.scope === undefined ? undefined : t.scope.split(" ").filter(Boolean),
  };
}

/**
 * RFC 9207 §2.4, checked by the app itself before the code is sent. openid-client makes the same
 * check inside authorizationCodeGrant (and still does, as a second line), but its error is the same
 * "invalid response" it raises for a malformed token response, after which the app could not tell
 * "the code never left" from "the code was spent". Checking first keeps that certain.
 */
function checkAuthorizationResponseIssuer(config: oidc.Configuration, callbackParams: URLSearchParams): void {
  const metadata = config.serverMetadata();
  const iss = callbackParams.get("iss");
  if (iss === null) {
    if (metadata.authorization_response_iss_parameter_supported === true) throw new AuthorizationResponseIssuerError("missing");
    return;
  }
  if (iss !== metadata.issuer) throw new AuthorizationResponseIssuerError("wrong");
}

/**
 * Redeems an authorization code (contract §4.1 "Token request: authorization code").
 *
 * Call it inside the redirect_uri request: codes live one minute and work once (contract §2).
 * The redirect_uri sent is the registered one, exactly (contract §5.3), whatever host header the
 * request arrived with.
 */
export async function redeemAuthorizationCode(callbackParams: URLSearchParams): Promise<TokenSet> {
  const config = await oauthConfiguration();
  checkAuthorizationResponseIssuer(config, callbackParams);
  const currentUrl = new URL(env().OAUTH_REDIRECT_URI);
  for (const [key, value] of callbackParams) currentUrl.searchParams.append(key, value);
  try {
    // The service, not the app, chose `state` (contract §1.2), so the app has nothing to compare
    // it with; the code itself is bound to this client and redirect_uri by the identity provider.
    const response = await oidc.authorizationCodeGrant(config, currentUrl, { expectedState: oidc.skipStateCheck });
    return toTokenSet(response);
  } catch (error) {
    const mapped = toTokenEndpointError(error);
    logger.warn({ kind: mapped.kind, status: mapped.status, description: mapped.description }, "authorization code redemption failed");
    throw mapped;
  }
}

/**
 * Makes sure the identity provider's configuration is known (discovery, cached per process). The
 * refresh coordinator calls it before committing its refresh marker, and the callback before it
 * claims the code, so that a failed discovery is never mistaken for a request whose outcome is
 * unknown: no token or code has left the process then. Throws TokenEndpointError (kind `not_sent`,
 * `unavailable`, `bad_response` or `other`) when discovery fails.
 */
export async function ensureOAuthConfiguration(): Promise<void> {
  await oauthConfiguration();
}

/** Exchanges a refresh token for a new pair (contract §4.1 "Token request: refresh"). */
export async function requestTokenRefresh(refreshToken: string): Promise<TokenSet> {
  const config = await oauthConfiguration();
  try {
    return toTokenSet(await oidc.refreshTokenGrant(config, refreshToken));
  } catch (error) {
    throw toTokenEndpointError(error);
  }
}
