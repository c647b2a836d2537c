// Lifetimes from the contract's table "Tokens and codes" and §8 "Limits". All read the sandbox clock.
export const AUTHORIZATION_CODE_TTL_MS = 60 * 1000; // 1 minute, single use
export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000; // 1 hour
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000; // 30 days, rotating
export const CONSENT_REQUEST_TTL_MS = 30 * 60 * 1000; // login / consent request: 30 minutes
/** "Just under one hour", as Hydra reports it (public-facts: 3599 or 3600). */
export const ACCESS_TOKEN_EXPIRES_IN_SECONDS = 3599;
