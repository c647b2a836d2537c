// Sign-in, sessions and abuse limits (docs/security.md).
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";

export const signInShape = {
  /**
   * How many reverse proxies in front of the app append to X-Forwarded-For; the client's address
   * is the entry that many places from the right (at least the rightmost). 0 or 1 both mean the
   * rightmost entry; see lib/http/client-address.ts for what a client can spoof at each setting.
   */
  TRUSTED_PROXY_COUNT: z.coerce.number().int().min(0).max(10).default(0),
  /** Password verifications (scrypt, 32 MiB and ~0.1 s each) at once per process; more answer "busy". */
  PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  /** Sign-in attempts per window from one client address, and for one account (across addresses). */
  SIGN_IN_ATTEMPTS_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000).default(20),
  SIGN_IN_ATTEMPTS_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(10),
  /**
   * Attempts per window from a browser that signed in to the account before (its device cookie,
   * lib/auth/staff-device.ts). Counted instead of the account's; beyond them the browser is unknown.
   */
  SIGN_IN_ATTEMPTS_PER_DEVICE: z.coerce.number().int().min(1).max(10_000).default(5),
  SIGN_IN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** The first lock-out after a window's attempts are used up; each further one doubles, up to 1 h. */
  SIGN_IN_LOCKOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** Requests to the redirect_uri per client address per minute (each may cost a token call). */
  CALLBACK_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(20),
  /** A session ends this long after sign-in, however active (next-auth's maxAge only slides). */
  SESSION_ABSOLUTE_LIFETIME_SECONDS: z.coerce.number().int().min(60).max(30 * 86_400).default(12 * 3600),
};
