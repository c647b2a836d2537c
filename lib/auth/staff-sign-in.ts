// A staff sign-in attempt, from next-auth's Credentials `authorize` (lib/auth/options.ts), with the
// defences around the password check (docs/security.md, "sign-in bursts"):
//
//   1. a hashing slot: at most PASSWORD_HASH_CONCURRENCY scrypt verifications run at once in this
//      process; with none free the attempt is refused at once ("busy"), never queued, so a burst
//      cannot take every libuv thread from the database driver and the webhook route;
//   2. rate limits per client address and per account, in PostgreSQL so they hold across
//      instances, with doubling lock-outs; a correct password is refused too while limited;
//   3. the check itself (lib/auth/staff-accounts.ts), which costs the same for unknown emails.
//
// Nothing the person typed reaches a log line or the rate-limit table: the account is named by a
// keyed hash of what was typed in the email field (it may hold a password typed in the wrong box),
// and by its email only when that email is a configured account.
import "server-only";
import { createHmac } from "node:crypto";
import { env } from "@/lib/env";
import { addressLimitKey, clientAddress } from "@/lib/http/client-address";
import { logger } from "@/lib/log";
import { rateLimits } from "@/lib/rate-limit";
import { TrySemaphore } from "@/lib/try-semaphore";
import { formatSignInRefusal, type SignInRefusal } from "./sign-in-refusal";
import { StaffCredentialsSchema, authenticateStaff, staffAccountsFrom, type StaffIdentity } from "./staff-accounts";

/** Thrown from `authorize`: next-auth hands its message to the form (lib/auth/sign-in-refusal.ts). */
export class SignInRefusedError extends Error {
  constructor(readonly refusal: SignInRefusal) {
    super(formatSignInRefusal(refusal));
    this.name = "SignInRefusedError";
  }
}

// How long to suggest waiting when every slot is busy: one verification takes about 0.1-0.3 s.
const BUSY_RETRY_SECONDS = 2;

let slots: TrySemaphore | undefined;

/** This process's password-hashing slots. */
function passwordHashSlots(): TrySemaphore {
  slots ??= new TrySemaphore(env().PASSWORD_HASH_CONCURRENCY);
  return slots;
}

/**
 * A keyed hash (HMAC-SHA-256 with the app's secret) of what was typed in the email field, trimmed
 * and lower-cased: the same account gets the same key on every instance, and the key reveals
 * nothing typed to someone reading the table or the logs without the secret.
 */
export function accountKey(typedEmail: string): string {
  return createHmac("sha256", env().NEXTAUTH_SECRET).update(`staff-account:${typedEmail.trim().toLowerCase()}`).digest("hex").slice(0, 32);
}

type Headers = Record<string, string | string[] | undefined> | undefined;

/**
 * The staff member these credentials belong to, null for a refusal, or a SignInRefusedError when
 * the attempt was turned away before its password was checked.
 */
export async function signInStaff(credentials: unknown, headers: Headers): Promise<StaffIdentity | null> {
  const address = clientAddress(headers);
  const typed = typeof (credentials as { email?: unknown } | undefined)?.email === "string" ? (credentials as { email: string }).email : "";
  const account = accountKey(typed);
  const accounts = staffAccountsFrom(env().STAFF_USERS);
  const parsedEmail = StaffCredentialsSchema.shape.email.safeParse(typed);
  // The email only when it is an account of ours; otherwise only its keyed hash.
  const logged = { address, account, email: parsedEmail.success && accounts.has(parsedEmail.data) ? parsedEmail.data : undefined };

  const release = passwordHashSlots().tryAcquire();
  if (!release) {
    logger.warn(logged, "staff sign-in refused: every password-hashing slot is busy");
    throw new SignInRefusedError({ reason: "busy", retryAfterSeconds: BUSY_RETRY_SECONDS });
  }
  try {
    const limits = rateLimits();
    // Both counters count this attempt, so a guesser spreading over addresses still meets the
    // account's limit, and one address trying many accounts meets its own.
    const [byAddress, byAccount] = await Promise.all([limits.signInAddress.take(addressLimitKey(address)), limits.signInAccount.take(account)]);
    const waits = [byAddress, byAccount].flatMap((verdict) => (verdict.allowed ? [] : [verdict.retryAfterSeconds]));
    if (waits.length > 0) {
      const retryAfterSeconds = Math.max(...waits);
      logger.warn({ ...logged, retryAfterSeconds }, "staff sign-in refused: too many attempts");
      throw new SignInRefusedError({ reason: "limited", retryAfterSeconds });
    }

    const staff = await authenticateStaff(credentials, accounts);
    if (!staff) {
      logger.warn(logged, "staff sign-in refused");
      return null;
    }
    // A success forgets the account's failures; the address's count stays, or one valid account
    // would let its holder reset their address's limit while guessing others.
    await limits.signInAccount.clear(account);
    logger.info({ address, email: staff.email }, "staff signed in");
    return staff;
  } finally {
    release();
  }
}
