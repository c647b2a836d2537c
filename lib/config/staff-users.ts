// The STAFF_USERS format and its parser: comma-separated `<email>=<hash>[=<role>]`, each entry
// printed by `npm run staff:password`.
//
// Apart from lib/auth/staff-accounts.ts (the sign-in check) because lib/env.ts checks the whole
// value at start-up (a bad entry stops the app), and the base layer it belongs to imports nothing of
// the domain (.dependency-cruiser.mjs). Pure: it parses, it verifies no password.
//
// Roles: a `viewer` sees everything in the console and changes nothing; an `operator` may also act
// on installs. An entry without a role is an operator, so configurations written before roles
// existed keep working (docs/spec-gaps.md A87).
import { z } from "zod";
import { parsePasswordHash } from "./password-hash";

export const STAFF_ROLES = ["viewer", "operator"] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

/** An entry without `=<role>` (every entry written before roles existed). */
export const DEFAULT_STAFF_ROLE: StaffRole = "operator";

export type StaffAccount = { hash: string; role: StaffRole };

/** email (lower case) → its password hash and role */
export type StaffAccounts = ReadonlyMap<string, StaffAccount>;

/** A staff email as both STAFF_USERS and the sign-in form read it. */
export const StaffEmailSchema = z.email().max(254);

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
    const email = StaffEmailSchema.safeParse(emailText.trim().toLowerCase());
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
