// Why the app cannot call the partner API for an install right now.

/** The install has no token the app may use. Only the operator can change that. */
export class NoUsableTokenError extends Error {
  constructor(
    readonly reason:
      | "no_grant" // no token stored yet
      | "reinstall_needed" // the token chain is gone (contract §7: the operator must re-install)
      | "revoked" // the operator uninstalled the app
      | "needs_reauth", // contract §7: stop calling the API until the operator re-consents
  ) {
    super(`no usable access token: ${reason}`);
    this.name = "NoUsableTokenError";
  }
}

/**
 * A refresh could not complete now, but nothing is lost: the identity provider did not answer,
 * or an earlier refresh's outcome is still being settled. A later call tries again.
 */
export class TokenRefreshUnavailableError extends Error {
  constructor(readonly detail: string) {
    super(`token refresh unavailable: ${detail}`);
    this.name = "TokenRefreshUnavailableError";
  }
}
