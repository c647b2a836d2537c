// Server-side session records. The session cookie stays a next-auth JWT (no database round trip to
// decode it), but it carries the id of a row here, and every read of the session checks that row
// (lib/auth/options.ts, callbacks.session, which both currentOperator() and currentStaff() go
// through). That gives what a self-contained JWT cannot:
//
// - sign-out ends the session everywhere: a copy of the cookie (another tab, a stolen backup, a
//   proxy log) stops working at once, not when its `exp` passes;
// - an absolute lifetime: next-auth's maxAge slides forward whenever the cookie is re-issued, so a
//   session kept busy would never end; the row's created_at is fixed at sign-in.
import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";

export type SessionKind = "operator" | "staff";

/** Rows this long past their end are deleted when new sessions start. */
const KEEP_ENDED_MS = 24 * 60 * 60 * 1000;

const lifetimeMs = () => env().SESSION_ABSOLUTE_LIFETIME_SECONDS * 1000;

/** Records a new session; its id goes into the JWT as `sid`. */
export async function startSession(kind: SessionKind, subject: string): Promise<{ id: string }> {
  await db().session.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - lifetimeMs() - KEEP_ENDED_MS) } } });
  return db().session.create({ data: { kind, subject }, select: { id: true } });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether the session is still on: recorded for this kind and subject, not signed out, and not
 * past its absolute end. A cookie without a session id (issued before sessions were recorded) is
 * not. When the database cannot answer, the session is treated as ended (and it is logged): a page
 * then asks the person to sign in, rather than trusting a cookie that may have been revoked.
 */
export async function isSessionLive(id: unknown, kind: SessionKind, subject: string): Promise<boolean> {
  if (typeof id !== "string" || !UUID.test(id)) return false;
  try {
    const row = await db().session.findUnique({ where: { id }, select: { kind: true, subject: true, createdAt: true, revokedAt: true } });
    return !!row && row.kind === kind && row.subject === subject && row.revokedAt === null && row.createdAt.getTime() + lifetimeMs() > Date.now();
  } catch (error) {
    logger.error({ err: error }, "could not check a session: treated as signed out");
    return false;
  }
}

/** Ends the session for every copy of its cookie (sign-out, or a session replaced by another). */
export async function endSession(id: unknown): Promise<void> {
  if (typeof id !== "string" || !UUID.test(id)) return;
  await db().session.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
}
