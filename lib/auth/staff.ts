// Staff sessions: the console's pages and server actions call requireStaff() (or, to change
// anything, requireStaffRole("operator")) before anything else.
//
// Staff sign in with the "staff" provider in lib/auth/options.ts (where a partner would swap in
// their own SSO). The session shares next-auth's cookie with operator sessions: one browser is
// either an operator or a staff member at a time.
//
// The session carries only the email. The account and its role are read from STAFF_USERS on every
// request, so removing someone, or demoting them to viewer, takes effect at their next request,
// not when their session cookie expires.
import "server-only";
import { redirect } from "next/navigation";
import { env } from "@/lib/env";
import { STAFF_SIGN_IN_PATH } from "./options";
import { sessionOfRequest } from "./request-session";
import { roleAllows, staffAccountsFrom, type StaffIdentity, type StaffRole } from "./staff-accounts";

export type { StaffIdentity, StaffRole };

/**
 * The signed-in staff member with their role as configured now, or null. The session is read once
 * per render (./request-session.ts: the console's layout and page share it); a server action reads
 * it on every call.
 */
export async function currentStaff(): Promise<StaffIdentity | null> {
  const session = await sessionOfRequest();
  const email = session?.staff?.email;
  if (!email) return null;
  const account = staffAccountsFrom(env().STAFF_USERS).get(email);
  return account ? { email, role: account.role } : null;
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

/** A signed-in staff member whose role does not allow what they asked for. */
export class StaffRoleRefusedError extends Error {
  constructor(
    readonly staff: StaffIdentity,
    readonly required: StaffRole,
  ) {
    super(`${staff.email} is a console ${staff.role}; this needs the ${required} role`);
    this.name = "StaffRoleRefusedError";
  }
}

/**
 * The signed-in staff member, if their role allows `role` (an operator may do all a viewer may).
 * No staff session: the sign-in page, as requireStaff(). A signed-in member with a lesser role:
 * throws StaffRoleRefusedError, so the caller can say why and record the refusal (lib/admin/actions.ts).
 */
export async function requireStaffRole(role: StaffRole): Promise<StaffIdentity> {
  const staff = await requireStaff();
  if (!roleAllows(staff.role, role)) throw new StaffRoleRefusedError(staff, role);
  return staff;
}

/** Whether this staff member may act on installs (the panel shows its buttons only then). */
export function canAct(staff: StaffIdentity): boolean {
  return roleAllows(staff.role, "operator");
}
