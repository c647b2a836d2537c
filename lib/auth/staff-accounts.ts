// The partner's staff accounts and the check of a sign-in attempt against them.
//
// Accounts come from STAFF_USERS (`<email>=<hash>[,<email>=<hash>...]`, hashes from
// `npm run staff:password`). This is deliberately the smallest thing that works: a partner with an
// identity provider of their own would replace the Credentials provider in lib/auth/options.ts with
// it (see the note there) and drop this file.
import "server-only";
import { z } from "zod";
import { parsePasswordHash, unmatchableHashLike, verifyPassword } from "./password";

export type StaffIdentity = { email: string };

/** email (lower case) → password hash */
export type StaffAccounts = ReadonlyMap<string, string>;

const EmailSchema = z.email().max(254);

/** What the sign-in form posts. Anything else (or too long) is a failed sign-in, like a wrong password. */
export const StaffCredentialsSchema = z.object({
  email: z.string().trim().toLowerCase().pipe(EmailSchema),
  password: z.string().min(1).max(1024),
});

/**
 * Parses STAFF_USERS. A malformed entry is a configuration error: it throws, naming the entry's
 * position and email but never its hash.
 */
export function parseStaffUsers(value: string): StaffAccounts {
  const accounts = new Map<string, string>();
  const entries = value.split(",").map((entry) => entry.trim()).filter(Boolean);
  entries.forEach((entry, index) => {
    // The hash contains no `=`, so the last one separates it from the email.
    const separator = entry.lastIndexOf("=");
    const email = EmailSchema.safeParse(entry.slice(0, Math.max(separator, 0)).trim().toLowerCase());
    const hash = entry.slice(separator + 1).trim();
    if (separator < 1 || !email.success) {
      throw new Error(`STAFF_USERS entry ${index + 1} must be \`<email>=<hash>\``);
    }
    if (!parsePasswordHash(hash)) {
      throw new Error(`STAFF_USERS entry ${index + 1} (${email.data}): the hash is not one \`npm run staff:password\` makes`);
    }
    if (accounts.has(email.data)) throw new Error(`STAFF_USERS lists ${email.data} twice`);
    accounts.set(email.data, hash);
  });
  return accounts;
}

let cache: { value: string; accounts: StaffAccounts } | undefined;

/** parseStaffUsers, remembered for the last value (the configuration does not change at run time). */
export function staffAccountsFrom(value: string): StaffAccounts {
  if (cache?.value !== value) cache = { value, accounts: parseStaffUsers(value) };
  return cache.accounts;
}

/**
 * The staff member these credentials belong to, or null. Every failure looks the same to the caller
 * (no "unknown email" versus "wrong password"), and an unknown email still costs a full scrypt
 * verification, against a hash with the same parameters, so the response time does not reveal which
 * emails have accounts either.
 */
export async function authenticateStaff(input: unknown, accounts: StaffAccounts): Promise<StaffIdentity | null> {
  const credentials = StaffCredentialsSchema.safeParse(input);
  if (!credentials.success) return null;
  const { email, password } = credentials.data;
  const hash = accounts.get(email);
  if (hash === undefined) {
    await verifyPassword(password, unmatchableHashLike(accounts.values().next().value));
    return null;
  }
  return (await verifyPassword(password, hash)) ? { email } : null;
}
