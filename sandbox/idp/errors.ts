// OAuth 2.0 errors with the exact wording of Ory Hydra / fosite (public-facts.md: "it behaves like Ory Hydra").
// fosite builds error_description as "<description of the error code> <hint>"; the texts below are fosite's.
// A hint marked "sandbox" is the sandbox's own wording where Hydra has no equivalent rule.

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "unsupported_response_type"
  | "access_denied"
  | "invalid_state";

const DESCRIPTIONS: Record<OAuthErrorCode, string> = {
  invalid_request:
    "The request is missing a required parameter, includes an invalid parameter value, includes a parameter more than once, or is otherwise malformed.",
  invalid_client:
    "Client authentication failed (e.g., unknown client, no client authentication included, or unsupported authentication method).",
  invalid_grant:
    "The provided authorization grant (e.g., authorization code, resource owner credentials) or refresh token is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.",
  unsupported_grant_type: "The authorization grant type is not supported by the authorization server.",
  invalid_scope: "The requested scope is invalid, unknown, or malformed.",
  unsupported_response_type: "The authorization server does not support obtaining a token using this method.",
  access_denied: "The resource owner or authorization server denied the request.",
  invalid_state: "The state is missing or does not have enough characters and is therefore considered too weak.",
};

const STATUS: Record<OAuthErrorCode, 400 | 401 | 403> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  unsupported_response_type: 400,
  access_denied: 403,
  invalid_state: 400,
};

export const HINTS = {
  clientNotFound: "The requested OAuth 2.0 Client does not exist.",
  basicNotAllowed:
    "The OAuth 2.0 Client supports client authentication method 'client_secret_post', but method 'client_secret_basic' was requested. You must configure the OAuth 2.0 client's 'token_endpoint_auth_method' value to accept 'client_secret_basic'.",
  notAForm: "Unable to parse HTTP body, make sure to send a properly formatted form request body.",
  emptyBody: "The POST body can not be empty.",
  grantTypeMissing: "Request parameter 'grant_type' is missing",
  codeAlreadyUsed: "The authorization code has already been used.",
  codeClientMismatch: "The OAuth 2.0 Client ID from this request does not match the one from the authorize request.",
  codeRedirectMismatch: 'The "redirect_uri" from this request does not match the one from the authorize request.',
  pkceDataMissing: "Unable to find initial PKCE data tied to this request",
  refreshAlreadyUsed: "The refresh token was already used.",
  refreshNotFound: "The refresh token is malformed or not valid.",
  refreshExpired: "The refresh token expired.",
  refreshClientMismatch: "The OAuth 2.0 Client ID from this request does not match the ID during the initial token issuance.",
  refreshConcurrent: "Failed to refresh token because of multiple concurrent requests using the same token. Please retry the request.",
  refreshRetry: "Failed to refresh token. Please retry the request.",
  redirectUriNotRegistered: "The 'redirect_uri' parameter does not match any of the OAuth 2.0 Client's pre-registered redirect urls.",
  stateTooShort: "Request parameter 'state' must be at least be 8 characters long to ensure sufficient entropy.",
  // sandbox: Hydra would accept PKCE from a confidential client; the contract (§1.7, §5.2) forbids it.
  noPkceForConfidentialClients:
    "This OAuth 2.0 Client is confidential and authenticates with client_secret_post; it must not send code_challenge or code_challenge_method (no PKCE in this flow).",
  operatorDenied: "The operator denied the request.",
} as const;

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly hint?: string,
  ) {
    super(hint ? `${DESCRIPTIONS[error]} ${hint}` : DESCRIPTIONS[error]);
  }

  get status(): 400 | 401 | 403 {
    return STATUS[this.error];
  }

  get description(): string {
    return this.message;
  }

  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
