// next-auth configuration. Operators never type a password here: the service authenticated them
// and the redirect_uri callback proves it, so an operator session is issued by the callback
// (lib/auth/operator-session.ts) as a next-auth JWT session bound to one install.
import "server-only";
import type { NextAuthOptions } from "next-auth";
import { env } from "@/lib/env";

/** How long an operator stays signed in to the app without coming back through the portal. */
export const OPERATOR_SESSION_MAX_AGE_SECONDS = 8 * 60 * 60;

export function authOptions(): NextAuthOptions {
  return {
    secret: env().NEXTAUTH_SECRET,
    session: { strategy: "jwt", maxAge: OPERATOR_SESSION_MAX_AGE_SECONDS },
    // No sign-in providers for operators: contract §1.3, the app's only inbound surface for the
    // install flow is its redirect_uri. (The partner's staff console adds its own provider.)
    providers: [],
    pages: { signIn: "/" },
    callbacks: {
      session({ session, token }) {
        if (token.kind === "operator" && typeof token.installRowId === "string" && typeof token.operatorId === "string") {
          session.operator = { installRowId: token.installRowId, operatorId: token.operatorId };
        }
        return session;
      },
    },
  };
}
