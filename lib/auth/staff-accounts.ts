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
import {
  parseStaffUsers,
  STAFF_ROLES,
  StaffEmailSchema,
  type StaffAccounts,
  type StaffRole,
} from "@/lib/config/staff-users";
import { unmatchableHashLike, verifyPassword } from "./password";

// The STAFF_USERS format and its parser live in the base layer, since the configuration check at
// start-up reads them too; re-exported so the console's code imports everything staff from here.
export {
  DEFAULT_STAFF_ROLE,
  parseStaffUsers,
  STAFF_ROLES,
  type StaffAccount,
  type StaffAccounts,
  type StaffRole,
} from "@/lib/config/staff-users";

export type StaffIdentity = { email: string; role: StaffRole };

/** Whether `role` may do what `required` may: an operator may do everything a viewer may. */
export function roleAllows(role: StaffRole, required: StaffRole): boolean {
  return STAFF_ROLES.indexOf(role) >= STAFF_ROLES.indexOf(required);
}

/** What the sign-in form posts. Anything else (or too long) is a failed sign-in, like a wrong password. */
export const StaffCredentialsSchema = z.object({
  email: z.string().trim().toLowerCase().pipe(StaffEmailSchema),
  password: z.string().min(1).max(1024),
});

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
