// The staff console's audit log (issue 14): every action a staff member attempted, allowed or
// refused for their role, with who (email, role), when, what, on which install, and how it ended.
//
// Writes come from lib/admin/actions.ts only:
//   - an action whose effect is a write of ours (mark for re-install, sync now) records its line in
//     the same transaction as that write: both happen, or neither;
//   - an action that calls out (refresh, reconcile, check now) records its line as `pending` before
//     the call and finishes it with the outcome after, so a process that dies in between still
//     leaves a trace ("outcome not recorded") instead of nothing.
// Reads serve the audit page (/admin/audit) and the install page's timeline (fetchAuditForInstall).
//
// Every read is bounded and on an index of staff_actions (prisma/schema.prisma): newest first by
// (requested_at, id), the whole log, or one install's, or one staff member's.
import "server-only";
import { z } from "zod";
import { KeysetCursorSchema, cursorAfter } from "./keyset";
import { db, type Tx } from "@/lib/db/client";
import type { StaffIdentity } from "@/lib/auth/staff-accounts";

export const CONSOLE_ACTIONS = ["refresh", "reconcile", "sync", "mark_reinstall", "check_reauth", "clear_budget_hold"] as const;
export type ConsoleAction = (typeof CONSOLE_ACTIONS)[number];

/** What staff read for each action, on the audit page and in the install's timeline. */
export const ACTION_LABEL: Record<ConsoleAction, string> = {
  refresh: "Refresh tokens now",
  reconcile: "Reconcile now",
  sync: "Sync now",
  mark_reinstall: "Mark for re-install",
  check_reauth: "Check re-authorization now",
  clear_budget_hold: "Clear the rate-limit hold",
};

/** The outcome of a line still under way (or of one whose process died before it finished). */
export const PENDING = "pending";

export type AuditTarget = { installRowId: string | null; installId: number | null };

export type AuditLine = {
  id: string;
  requestedAt: Date;
  finishedAt: Date | null;
  staffEmail: string;
  staffRole: string;
  action: string;
  installRowId: string | null;
  installId: number | null;
  outcome: string;
  detail: string | null;
};

const auditLine = {
  id: true,
  requestedAt: true,
  finishedAt: true,
  staffEmail: true,
  staffRole: true,
  action: true,
  installRowId: true,
  installId: true,
  outcome: true,
  detail: true,
} as const;

/** Writes a finished line (a refusal, an action done in one transaction): inside `tx` when given. */
export async function recordStaffAction(
  staff: StaffIdentity,
  action: ConsoleAction,
  target: AuditTarget,
  outcome: string,
  detail: string,
  tx?: Tx,
): Promise<void> {
  const now = new Date();
  await (tx ?? db()).staffAction.create({
    data: { staffEmail: staff.email, staffRole: staff.role, action, ...target, outcome, detail, requestedAt: now, finishedAt: now },
    select: { id: true },
  });
}

/** Writes a `pending` line before an action calls out; finishStaffAction gives it its outcome. */
export async function startStaffAction(staff: StaffIdentity, action: ConsoleAction, target: AuditTarget): Promise<string> {
  const row = await db().staffAction.create({
    data: { staffEmail: staff.email, staffRole: staff.role, action, ...target, outcome: PENDING },
    select: { id: true },
  });
  return row.id;
}

/** Records the outcome of a pending line, once (a finished line is never rewritten). */
export async function finishStaffAction(id: string, outcome: string, detail: string): Promise<void> {
  await db().staffAction.updateMany({ where: { id, outcome: PENDING }, data: { outcome, detail, finishedAt: new Date() } });
}

/**
 * The install's staff actions, newest first, at most `limit` (1-200): for the install page's
 * timeline, on staff_actions_install_row_id_requested_at_id_idx.
 */
export async function fetchAuditForInstall(installRowId: string, limit = 50): Promise<AuditLine[]> {
  const take = Math.min(Math.max(Math.trunc(limit), 1), 200);
  return db().staffAction.findMany({
    where: { installRowId },
    select: auditLine,
    orderBy: [{ requestedAt: "desc" }, { id: "desc" }],
    take,
  });
}

// ----- the audit page ------------------------------------------------------------------------------

export const AUDIT_PAGE_SIZE = 50;

/**
 * The audit page's query string. A filter that cannot be read is dropped rather than refused: a
 * stranger's address never makes the page fail (docs/security.md). `install` is the install_id staff
 * see, or an install's row id; `staff` is an email.
 */
export const AuditQuerySchema = z.object({
  install: z
    .string()
    .trim()
    .max(100)
    .transform((value) => (/^\d{1,10}$/.test(value) && Number(value) <= 2 ** 31 - 1 ? { installId: Number(value) } : z.uuid().safeParse(value).success ? { installRowId: value.toLowerCase() } : undefined))
    .optional()
    .catch(undefined),
  staff: z.string().trim().toLowerCase().pipe(z.email().max(254)).optional().catch(undefined),
  after: KeysetCursorSchema.optional().catch(undefined),
});

export type AuditQuery = z.infer<typeof AuditQuerySchema>;

/** A query string's first value per key (Next.js gives arrays for repeated keys). */
export function readAuditQuery(searchParams: Record<string, string | string[] | undefined>): AuditQuery {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) || undefined;
  return AuditQuerySchema.parse({ install: first(searchParams.install), staff: first(searchParams.staff), after: first(searchParams.after) });
}

export type AuditPage = { lines: AuditLine[]; next: string | null; query: AuditQuery };

/**
 * One page of the log, newest first, after the cursor when given. One indexed query: by install
 * (its row id; an install_id is first looked up), by staff member, or the whole log; one more line
 * than shown says whether there is a next page.
 */
export async function fetchAuditPage(query: AuditQuery): Promise<AuditPage> {
  // An install_id is looked up first (installs' unique index), so the log is read by row id on its index.
  let installRowId = query.install?.installRowId;
  if (query.install?.installId !== undefined) {
    const install = await db().install.findUnique({ where: { installId: query.install.installId }, select: { id: true } });
    if (!install) return { lines: [], next: null, query };
    installRowId = install.id;
  }
  const where = {
    ...(installRowId ? { installRowId } : {}),
    ...(query.staff ? { staffEmail: query.staff } : {}),
    ...(query.after
      ? { OR: [{ requestedAt: { lt: query.after.at } }, { requestedAt: query.after.at, id: { lt: query.after.id } }] }
      : {}),
  };
  const rows = await db().staffAction.findMany({
    where,
    select: auditLine,
    orderBy: [{ requestedAt: "desc" }, { id: "desc" }],
    take: AUDIT_PAGE_SIZE + 1,
  });
  const lines = rows.slice(0, AUDIT_PAGE_SIZE);
  const last = lines.at(-1);
  const next = rows.length > AUDIT_PAGE_SIZE && last ? cursorAfter(last.requestedAt, last.id) : null;
  return { lines, next, query };
}
