// Login CSRF at the redirect_uri (docs/security.md). Anyone can start an install of their own and
// send a victim the callback URL with their fresh code: the victim's browser would complete it and
// be signed in silently as the attacker's operator, replacing the victim's own session (another
// operator's, or a staff member's), and whatever the victim then does lands in the attacker's install.
//
// The code must still be redeemed at once (contract §2: codes live one minute and work once; never
// queue them), so the install is completed and stored as always. Only the sign-in waits: when the
// browser already holds a session for someone else, the result is kept here, server-side, for a
// few minutes, bound to this browser by an httpOnly cookie, and the person chooses on
// /oauth/continue (a POST server action, which Next.js protects against cross-site posts by
// comparing Origin and Host). No session, or one for the same operator (the same install, or a
// re-install after an uninstall): signed in directly.
import "server-only";
import { createHash, randomBytes } from "node:crypto";
import { getServerSession } from "next-auth";
import { decode } from "next-auth/jwt";
import { cookies } from "next/headers";
import { PRODUCT } from "@/lib/config/product";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { authOptions, secureCookies, sessionCookieName } from "./options";
import { createOperatorSessionCookie, type OperatorSession } from "./operator-session";
import { endSession } from "./sessions";

/** Long enough to read the question; short enough that a forgotten tab does not keep it. */
const PENDING_TTL_SECONDS = 10 * 60;

export type CurrentSignIn = { kind: "operator"; operatorId: string; installRowId: string } | { kind: "staff"; email: string };

type Cookie = { name: string; value: string; options: { httpOnly: boolean; sameSite: "lax"; path: string; secure: boolean; maxAge: number } };

/** `__Host-` on https: the browser then refuses it from any other host or path, and over http. */
function pendingCookieName(): string {
  return `${secureCookies() ? "__Host-" : ""}${PRODUCT.cookies.pendingSignIn}`;
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** Who this browser is signed in as now (a live session only), or null. */
export async function currentSignIn(): Promise<CurrentSignIn | null> {
  const session = await getServerSession(authOptions());
  if (session?.operator) return { kind: "operator", ...session.operator };
  if (session?.staff) return { kind: "staff", email: session.staff.email };
  return null;
}

/**
 * What the redirect_uri does once the install is stored: sign the operator in at once, or (when this
 * browser holds someone else's session) keep the sign-in pending and ask.
 */
export async function signInAfterInstall(
  operator: OperatorSession,
): Promise<{ kind: "signed_in"; cookie: Cookie } | { kind: "ask"; cookie: Cookie }> {
  const current = await currentSignIn();
  // The same operator (the same install, or a re-install after an uninstall) is no one else: an
  // attacker's link carries the attacker's operator, never the victim's.
  if (!current || (current.kind === "operator" && current.operatorId === operator.operatorId)) {
    return { kind: "signed_in", cookie: await createOperatorSessionCookie(operator) };
  }
  const token = randomBytes(32).toString("base64url");
  const now = Date.now();
  await db().pendingSignIn.deleteMany({ where: { expiresAt: { lt: new Date(now) } } });
  await db().pendingSignIn.create({
    data: { tokenHash: hashToken(token), ...operator, expiresAt: new Date(now + PENDING_TTL_SECONDS * 1000) },
  });
  return {
    kind: "ask",
    cookie: {
      name: pendingCookieName(),
      value: token,
      options: { httpOnly: true, sameSite: "lax", path: "/", secure: secureCookies(), maxAge: PENDING_TTL_SECONDS },
    },
  };
}

/** The sign-in waiting in this browser (by its cookie), if it has not expired. Reading does not use it. */
export async function findPendingSignIn(): Promise<OperatorSession | null> {
  const token = (await cookies()).get(pendingCookieName())?.value;
  if (!token) return null;
  const row = await db().pendingSignIn.findUnique({ where: { tokenHash: hashToken(token) } });
  if (!row || row.expiresAt.getTime() <= Date.now()) return null;
  return { installRowId: row.installRowId, operatorId: row.operatorId };
}

/**
 * Settles the pending sign-in in this browser, once: `switch` ends the current session (for every
 * copy of its cookie) and signs in as the operator who just connected; `stay` leaves the current
 * session as it is. Returns what was settled, or null when nothing was pending (already settled,
 * expired, or another browser: the cookie is the binding).
 */
export async function settlePendingSignIn(choice: "switch" | "stay"): Promise<{ operator: OperatorSession } | null> {
  const jar = await cookies();
  const token = jar.get(pendingCookieName())?.value;
  jar.delete(pendingCookieName());
  if (!token) return null;
  const tokenHash = hashToken(token);
  const row = await db().pendingSignIn.findUnique({ where: { tokenHash } });
  if (!row || row.expiresAt.getTime() <= Date.now()) return null;
  // Deleting is the claim: of two concurrent submissions, only one deletes the row.
  const { count } = await db().pendingSignIn.deleteMany({ where: { tokenHash } });
  if (count !== 1) return null;
  const operator = { installRowId: row.installRowId, operatorId: row.operatorId };
  if (choice === "switch") {
    await endSession(await currentSessionId());
    const cookie = await createOperatorSessionCookie(operator);
    jar.set(cookie.name, cookie.value, cookie.options);
  }
  return { operator };
}

/** The session id inside this browser's session cookie, to revoke it when it is replaced. */
async function currentSessionId(): Promise<string | undefined> {
  const value = (await cookies()).get(sessionCookieName())?.value;
  if (!value) return undefined;
  const token = await decode({ token: value, secret: env().NEXTAUTH_SECRET }).catch(() => null);
  return typeof token?.sid === "string" ? token.sid : undefined;
}
