// Operator sessions: issued by the redirect_uri callback, read by every dashboard page.
import "server-only";
import { encode } from "next-auth/jwt";
import { env } from "@/lib/env";
import { OPERATOR_SESSION_MAX_AGE_SECONDS, sessionCookieName, secureCookies } from "./options";
import { sessionOfRequest } from "./request-session";
import { startSession } from "./sessions";

export type OperatorSession = { installRowId: string; operatorId: string };

/**
 * A next-auth session cookie for the operator who just completed the install flow, encoded with
 * next-auth's own JWT encoder so `getServerSession` reads it like any other session.
 */
export async function createOperatorSessionCookie(session: OperatorSession) {
  const secure = secureCookies();
  const name = sessionCookieName();
  const { id: sid } = await startSession("operator", session.installRowId);
  const value = await encode({
    token: { kind: "operator", sub: `install:${session.installRowId}`, ...session, sid },
    secret: env().NEXTAUTH_SECRET,
    maxAge: OPERATOR_SESSION_MAX_AGE_SECONDS,
  });
  return {
    name,
    value,
    options: { httpOnly: true, sameSite: "lax" as const, path: "/", secure, maxAge: OPERATOR_SESSION_MAX_AGE_SECONDS },
  };
}

/**
 * The signed-in operator, or null. Pages decide what to show without one. The session's row is
 * checked on the way (callbacks.session in options.ts): signed out or too old reads as null.
 * Read once per render, however many of the layout and page ask (./request-session.ts); a server
 * action or a route handler reads it on every call.
 */
export async function currentOperator(): Promise<OperatorSession | null> {
  const session = await sessionOfRequest();
  return session?.operator ?? null;
}
