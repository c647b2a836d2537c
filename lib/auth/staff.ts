// Staff sessions: the console's pages and server actions call requireStaff() before anything else.
//
// Staff sign in with the "staff" provider in lib/auth/options.ts (where a partner would swap in
// their own SSO). The session shares next-auth's cookie with operator sessions: one browser is
// either an operator or a staff member at a time.
import "server-only";
import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import { env } from "@/lib/env";
import { STAFF_SIGN_IN_PATH, authOptions } from "./options";
import { staffAccountsFrom, type StaffIdentity } from "./staff-accounts";

export type { StaffIdentity };

/** The signed-in staff member, or null. */
export async function currentStaff(): Promise<StaffIdentity | null> {
  const session = await getServerSession(authOptions());
  const email = session?.staff?.email;
  // The account must still be configured: removing someone from STAFF_USERS ends their access at
  // their next request, not when their session cookie expires.
  if (!email || !staffAccountsFrom(env().STAFF_USERS).has(email)) return null;
  return { email };
}

/**
 * The signed-in staff member; anyone else (no session, or an operator's) is sent to the sign-in
 * page. Call it first in every console page and every console server action: layouts do not
 * protect the pages below them, and server actions are public endpoints.
 */
export async function requireStaff(): Promise<StaffIdentity> {
  const staff = await currentStaff();
  if (!staff) redirect(STAFF_SIGN_IN_PATH);
  return staff;
}
