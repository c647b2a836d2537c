// A staff sign-in attempt, from next-auth's Credentials `authorize` (lib/auth/options.ts), with the
// defences around the password check (docs/security.md, "sign-in bursts"):
//
//   1. a hashing slot: at most PASSWORD_HASH_CONCURRENCY scrypt verifications run at once in this
//      process; with none free the attempt is refused at once ("busy"), never queued, so a burst
//      cannot take every libuv thread from the database driver and the webhook route;
//   2. rate limits, in PostgreSQL so they hold across instances, with doubling lock-outs; a correct
//      password is refused too while limited:
//      - per device, for a browser holding a valid device cookie for this account (it signed in
//        to it before: lib/auth/staff-device.ts, OWASP's "device cookies"), and nothing else: neither
//        strangers at the same address (an office behind one NAT) nor strangers guessing the account
//        can lock it out. A device over its own budget, or whose cookie was replaced, is unknown;
//      - per client address and per account, for attempts from unknown devices, so strangers spending
//        the account's budget lock out unknown devices, never the staff member's own browser;
//   3. the check itself (lib/auth/staff-accounts.ts), which costs the same for unknown emails.
//
// Nothing the person typed reaches a log line or the rate-limit table: the account is named by a
// keyed hash of what was typed in the email field (it may hold a password typed in the wrong box),
// and by its email only when that email is a configured account. The device cookie's value is
// never logged either: only whether the device was known.
import "server-only";
import { createHmac } from "node:crypto";
import { env } from "@/lib/env";
import { addressLimitKey, clientAddress } from "@/lib/http/client-address";
import { logger } from "@/lib/log";
import { rateLimits } from "@/lib/rate-limit";
import { TrySemaphore } from "@/lib/try-semaphore";
import { formatSignInRefusal, type SignInRefusal } from "./sign-in-refusal";
import { DEVICE_COOKIE_MAX_AGE_SECONDS, deviceCookieFor, knownDevice, newDeviceId, rememberDevice } from "./staff-device";
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
    const device = knownDevice(headers, account);
    // A known device's attempt counts against its own budget only. An unknown device's, or one whose
    // device is over its budget, against its address's and the account's, so a guesser spreading over
    // addresses still meets the account's limit, and one address trying many accounts meets its own.
    const byDevice = device ? await limits.signInDevice.take(device) : undefined;
    const trusted = byDevice?.allowed === true;
    const [byAddress, byAccount] = trusted ? [] : await Promise.all([limits.signInAddress.take(addressLimitKey(address)), limits.signInAccount.take(account)]);
    const deviceState = !device ? "unknown" : trusted ? "known" : "known, over its budget or replaced";
    const waits = [byAddress, byAccount].flatMap((verdict) => (!verdict || verdict.allowed ? [] : [verdict.retryAfterSeconds]));
    if (waits.length > 0) {
      const retryAfterSeconds = Math.max(...waits);
      logger.warn({ ...logged, device: deviceState, retryAfterSeconds }, "staff sign-in refused: too many attempts");
      throw new SignInRefusedError({ reason: "limited", retryAfterSeconds });
    }

    const staff = await authenticateStaff(credentials, accounts);
    if (!staff) {
      logger.warn({ ...logged, device: deviceState }, "staff sign-in refused");
      return null;
    }
    // A success from an unknown device forgets the account's failures. From a known device, the
    // account's count stays: it holds strangers' failures, and the staff member signing in from their
    // own browser must not reopen guessing for them. The address's count always stays, or one valid
    // account would let its holder reset their address's limit while guessing others.
    if (!trusted) await limits.signInAccount.clear(account);
    // Every success issues a new device id (OWASP: "issue new device cookie") and retires the cookie
    // presented, so a copy of it taken earlier is an unknown device from now on: a thief's guesses
    // spend that old cookie's budget or the strangers', never the owner's current cookie's.
    if (device) await limits.signInDevice.retire(device, DEVICE_COOKIE_MAX_AGE_SECONDS);
    await rememberDevice(deviceCookieFor(account, newDeviceId())).catch((error: unknown) =>
      logger.warn({ err: error, address, email: staff.email }, "staff signed in, but the device cookie could not be set"),
    );
    logger.info({ address, email: staff.email, device: deviceState }, "staff signed in");
    return staff;
  } finally {
    release();
  }
}
