// What this app keeps in its next-auth session and JWT.
import "next-auth";
import "next-auth/jwt";

declare module "next-auth" {
  interface Session {
    /** Present for an operator who arrived through the redirect_uri: bound to one install. */
    operator?: { installRowId: string; operatorId: string };
    /** Present for the partner's staff, signed in to the console (/admin). */
    staff?: { email: string };
  }
}

declare module "next-auth/jwt" {
  interface JWT {
    kind?: "operator" | "staff";
    installRowId?: string;
    operatorId?: string;
    /** The session's row in the `sessions` table (lib/auth/sessions.ts), checked on every read. */
    sid?: string;
    email?: string;
  }
}
