// The session of the request being handled, read once per server render.
//
// Every dashboard and console page is a layout and a page, and both ask who is signed in (the layout
// for its frame, the page because a layout does not protect the pages below it: lib/auth/staff.ts).
// Each read is next-auth's getServerSession: the cookie's JWE decrypted (with a key derived by HKDF
// from NEXTAUTH_SECRET) and the session's row checked in the database (lib/auth/sessions.ts). Twice
// per page was half the page's session work for nothing: the answer cannot change within one render.
//
// React's cache() shares one call's result within one server render, and only there: the layout,
// the page and every component of one request's render get the same answer, and the next request
// reads its own cookie again. Outside a render (a server action, a route handler, the worker) React
// keeps no cache and every call reads the cookie and checks the row afresh, so a server action still
// checks its caller, and a sign-out in the action is seen by the render that follows it.
import "server-only";
import { getServerSession, type Session } from "next-auth";
import { cache } from "react";
import { logger } from "@/lib/log";
import { authOptions } from "./options";

/** The request's next-auth session (operator or staff; empty or null when none), once per render. */
export const sessionOfRequest = cache(async (): Promise<Session | null> => {
  const session = await getServerSession(authOptions());
  // Which kind only, never the cookie or who: counts the reads per request for the tests and for
  // anyone checking that a page decodes its session once (LOG_LEVEL=debug).
  logger.debug({ kind: session?.operator ? "operator" : session?.staff ? "staff" : "none" }, "session read");
  return session;
});
