// next-auth configuration. Two kinds of people hold a session, both as a next-auth JWT:
//
// - Operators never type a password here: the service authenticated them and the redirect_uri
//   callback proves it, so an operator session is issued by the callback
//   (lib/auth/operator-session.ts), bound to one install. token.kind === "operator".
// - The partner's own staff sign in to the console (/admin) with the "staff" Credentials provider
//   below (lib/auth/staff.ts). token.kind === "staff".
//
// Both live in next-auth's one session cookie, so one browser holds one or the other: signing in
// as staff replaces an operator session in that browser; an install completed in a browser that
// holds another session asks first (lib/auth/pending-sign-in.ts). Each page checks the kind it
// needs (currentOperator, requireStaff).
//
// Every session is also a row in the `sessions` table (lib/auth/sessions.ts): the JWT carries its
// id, callbacks.session checks it on every read, and sign-out revokes it (events.signOut), so a
// copied cookie stops working and no session outlives SESSION_ABSOLUTE_LIFETIME_SECONDS.
import "server-only";
import type { NextAuthOptions, Session } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { endSession, isSessionLive, startSession } from "./sessions";
import { staffAccountsFrom } from "./staff-accounts";
import { SignInRefusedError, signInStaff } from "./staff-sign-in";

/**
 * How long a session lasts without being used (next-auth's sliding maxAge). However busy, it also
 * ends SESSION_ABSOLUTE_LIFETIME_SECONDS after sign-in (lib/auth/sessions.ts).
 */
export const OPERATOR_SESSION_MAX_AGE_SECONDS = 8 * 60 * 60;

/** The console's sign-in page; next-auth sends its own sign-in and error redirects there too. */
export const STAFF_SIGN_IN_PATH = "/admin/sign-in";

/**
 * `__Secure-` (and `__Host-`) cookies when the app runs on https, decided from APP_URL rather than
 * from NEXTAUTH_URL (which could disagree): the same rule for every cookie the app sets.
 */
export function secureCookies(): boolean {
  return new URL(env().APP_URL).protocol === "https:";
}

/** The session cookie's name, as next-auth sets it (below) and as operator-session.ts sets it for an operator. */
export function sessionCookieName(secure = secureCookies()): string {
  return `${secure ? "__Secure-" : ""}${PRODUCT.cookies.session}`;
}

/**
 * next-auth's cookies under the product's names (lib/config/product.ts) instead of its `next-auth.*`
 * defaults, so that two apps on one host (localhost in development) never share a session. The
 * options are next-auth's own defaults; the prefixes are the ones next-auth uses. The PKCE, state
 * and nonce cookies are only for OAuth providers, which this app does not have.
 */
function authCookies(secure: boolean): NextAuthOptions["cookies"] {
  const options = { httpOnly: true, sameSite: "lax", path: "/", secure } as const;
  return {
    sessionToken: { name: sessionCookieName(secure), options },
    callbackUrl: { name: `${secure ? "__Secure-" : ""}${PRODUCT.cookies.callbackUrl}`, options },
    csrfToken: { name: `${secure ? "__Host-" : ""}${PRODUCT.cookies.csrf}`, options },
  };
}

export function authOptions(): NextAuthOptions {
  return {
    secret: env().NEXTAUTH_SECRET,
    session: { strategy: "jwt", maxAge: OPERATOR_SESSION_MAX_AGE_SECONDS },
    useSecureCookies: secureCookies(),
    cookies: authCookies(secureCookies()),
    // No sign-in provider for operators: contract §1.3, the app's only inbound surface for the
    // install flow is its redirect_uri. The one provider is for the partner's staff.
    //
    // Using your own identity provider for staff (Google Workspace, Okta, Entra ID, ...): replace
    // this Credentials provider with next-auth's provider for it, keep `id: "staff"` (or update
    // the sign-in form in app/admin/sign-in/sign-in-form.tsx), and in callbacks.jwt accept only
    // your organisation's accounts. lib/auth/staff-accounts.ts and STAFF_USERS then go away.
    providers: [
      CredentialsProvider({
        id: "staff",
        name: "Staff",
        credentials: {
          email: { label: "Email", type: "email" },
          password: { label: "Password", type: "password" },
        },
        async authorize(credentials, req) {
          try {
            const staff = await signInStaff(credentials, req.headers);
            return staff ? { id: `staff:${staff.email}`, email: staff.email } : null;
          } catch (error) {
            // Too many attempts, or no hashing slot free: next-auth hands this message to the form
            // (lib/auth/sign-in-refusal.ts), which says how long to wait.
            if (error instanceof SignInRefusedError) throw error;
            // A malformed STAFF_USERS, or the rate limits' store failing with no fallback. Logged
            // for the partner; the person signing in sees the usual failure (next-auth would put a
            // thrown message into the redirect URL).
            logger.error({ err: error }, "staff sign-in impossible");
            return null;
          }
        },
      }),
    ],
    pages: { signIn: STAFF_SIGN_IN_PATH, error: STAFF_SIGN_IN_PATH },
    callbacks: {
      async jwt({ token, user, account }) {
        // On sign-in only (`account` is present just then); afterwards the token passes unchanged.
        // The operator token is encoded by operator-session.ts and never comes through here on issue.
        if (account?.provider === "staff" && user.email) {
          const { id } = await startSession("staff", user.email);
          return { sub: user.id, kind: "staff", email: user.email, sid: id };
        }
        return token;
      },
      // Runs on every read of the session (getServerSession, /api/auth/session). The answer is
      // built here from what the app put in the token, never next-auth's default `user` (which
      // copies the token's email). A session whose row is signed out or past its absolute lifetime,
      // or a staff account no longer in STAFF_USERS, reads as no session at all: an empty object,
      // which the session endpoint answers as `{}` (as for no cookie) and getServerSession as null.
      async session({ session, token }) {
        if (token.kind === "operator" && typeof token.installRowId === "string" && typeof token.operatorId === "string") {
          if (await isSessionLive(token.sid, "operator", token.installRowId)) {
            return { expires: session.expires, operator: { installRowId: token.installRowId, operatorId: token.operatorId } };
          }
        }
        if (token.kind === "staff" && typeof token.email === "string") {
          // With your own identity provider for staff, drop the STAFF_USERS check with the rest of it.
          if (staffAccountsFrom(env().STAFF_USERS).has(token.email) && (await isSessionLive(token.sid, "staff", token.email))) {
            return { expires: session.expires, staff: { email: token.email } };
          }
        }
        return {} as Session;
      },
    },
    events: {
      // next-auth's sign-out (POST /api/auth/signout, with its CSRF token) clears the cookie in this
      // browser; revoking the row ends every copy of it too.
      async signOut({ token }) {
        await endSession(token?.sid);
      },
    },
  };
}
