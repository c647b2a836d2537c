// The partner's staff accounts and the check of a sign-in attempt against them.
//
// Accounts come from STAFF_USERS (`<email>=<hash>[=<role>][,...]`, each entry printed by
// `npm run staff:password`). This is deliberately the smallest thing that works: a partner with an
// identity provider of their own would replace the Credentials provider in lib/auth/options.ts with
// it (see the note there) and map their groups to the two roles below.
//
// Roles (issue 14): a `viewer` sees everything in the console and changes nothing; an `operator` of
// the console may also act on installs (refresh, reconcile, sync, mark for re-install). An entry
// without a role is an operator, so configurations written before roles existed keep working.
import "server-only";
import { z } from "zod";
import { parsePasswordHash, unmatchableHashLike, verifyPassword } from "./password";

export const STAFF_ROLES = ["viewer", "operator"] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

/** An entry without `=<role>` (every entry written before roles existed). */
export const DEFAULT_STAFF_ROLE: StaffRole = "operator";

export type StaffIdentity = { email: string; role: StaffRole };

/** Whether `role` may do what `required` may: an operator may do everything a viewer may. */
export function roleAllows(role: StaffRole, required: StaffRole): boolean {
  return STAFF_ROLES.indexOf(role) >= STAFF_ROLES.indexOf(required);
}

export type StaffAccount = { hash: string; role: StaffRole };

/** email (lower case) → its password hash and role */
export type StaffAccounts = ReadonlyMap<string, StaffAccount>;

const EmailSchema = z.email().max(254);

/** What the sign-in form posts. Anything else (or too long) is a failed sign-in, like a wrong password. */
export const StaffCredentialsSchema = z.object({
  email: z.string().trim().toLowerCase().pipe(EmailSchema),
  password: z.string().min(1).max(1024),
});

/**
 * Parses STAFF_USERS. A malformed entry is a configuration error: it throws, naming the entry's
 * position and email but never its hash. Each entry is `<email>=<hash>` or `<email>=<hash>=<role>`:
 * neither an email (as zod reads it) nor a hash contains `=`, so the parts split cleanly.
 */
export function parseStaffUsers(value: string): StaffAccounts {
  const accounts = new Map<string, StaffAccount>();
  const entries = value.split(",").map((entry) => entry.trim()).filter(Boolean);
  entries.forEach((entry, index) => {
    const [emailText = "", hashText, roleText, ...rest] = entry.split("=");
    const email = EmailSchema.safeParse(emailText.trim().toLowerCase());
    if (!email.success || hashText === undefined || rest.length > 0) {
      throw new Error(`STAFF_USERS entry ${index + 1} must be \`<email>=<hash>\` or \`<email>=<hash>=<role>\``);
    }
    const hash = hashText.trim();
    if (!parsePasswordHash(hash)) {
      throw new Error(`STAFF_USERS entry ${index + 1} (${email.data}): the hash is not one \`npm run staff:password\` makes`);
    }
    const role = roleText === undefined ? DEFAULT_STAFF_ROLE : STAFF_ROLES.find((r) => r === roleText.trim().toLowerCase());
    if (!role) {
      throw new Error(`STAFF_USERS entry ${index + 1} (${email.data}): the role must be ${STAFF_ROLES.join(" or ")}`);
    }
    if (accounts.has(email.data)) throw new Error(`STAFF_USERS lists ${email.data} twice`);
    accounts.set(email.data, { hash, role });
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
  const account = accounts.get(email);
  if (account === undefined) {
    await verifyPassword(password, unmatchableHashLike(accounts.values().next().value?.hash));
    return null;
  }
  return (await verifyPassword(password, account.hash)) ? { email, role: account.role } : null;
}
