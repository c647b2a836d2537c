// The install state machine: the one place an install's status changes.
//
// The service does not publish its install state names (contract §3); these four are the app's
// own reading of the moves the contract states (docs/spec-gaps.md):
//
//   ACTIVE ──scopes widened (403 NEEDS_REAUTH)──▶ NEEDS_REAUTH ──operator re-consents──▶ ACTIVE
//   ACTIVE / NEEDS_REAUTH ──refresh chain gone──▶ REINSTALL_NEEDED ──new consent (callback)──▶ ACTIVE
//   any ──install.revoked, or superseded by a newer install──▶ REVOKED (final: history only)
//
// Every change writes an InstallEvent with its cause, so staff can see why an install is where it is,
// and the moves into and out of trouble raise an alert (lib/alerts/) in the same transaction.
import "server-only";
import { db, type Tx } from "@/lib/db/client";
import type { InstallStatus } from "@/lib/db/generated/enums";
import { logger } from "@/lib/log";
import { alertOnTransition } from "@/lib/alerts/incidents";

export type TransitionCause = "callback" | "webhook" | "api" | "refresh" | "staff" | "reconcile";

/**
 * How the detail of a move to REINSTALL_NEEDED (cause "refresh") begins when the install was lost
 * because a refresh's answer never reached the app (lib/oauth/refresh.ts, rule 3). The operator's
 * page tells that story in plain words (describeLostInstall), so the two must agree: one constant.
 */
export const REFRESH_ANSWER_LOST = "an earlier refresh's answer was lost";

const ALLOWED: Record<InstallStatus, readonly InstallStatus[]> = {
  ACTIVE: ["NEEDS_REAUTH", "REINSTALL_NEEDED", "REVOKED"],
  NEEDS_REAUTH: ["ACTIVE", "REINSTALL_NEEDED", "REVOKED"],
  REINSTALL_NEEDED: ["ACTIVE", "REVOKED"],
  // contract §3: a revoked install never comes back; a re-install is a new install_id.
  REVOKED: [],
};

export function canTransition(from: InstallStatus, to: InstallStatus): boolean {
  return ALLOWED[from].includes(to);
}

/**
 * Moves an install to `to` if that move is allowed from its current status, and returns whether
 * it moved. The status is re-read under a row lock inside the caller's transaction, so two writers
 * cannot both apply a move computed from a stale read. Old news cannot undo newer state: REVOKED is
 * final, a late install.created finds its install already recorded (lib/installs/register.ts), and
 * configuration updates are ordered by their signed delivered_at (install-config-updated.ts).
 */
export async function transitionInstall(
  tx: Tx,
  installRowId: string,
  to: InstallStatus,
  cause: TransitionCause,
  detail?: string,
): Promise<boolean> {
  const [row] = await tx.$queryRaw<{ status: InstallStatus }[]>`
    SELECT status FROM installs WHERE id = ${installRowId}::uuid FOR UPDATE`;
  if (!row || !canTransition(row.status, to)) return false;
  const now = new Date();
  await tx.install.update({
    where: { id: installRowId },
    data: { status: to, statusChangedAt: now, ...(to === "REVOKED" ? { revokedAt: now } : {}) },
  });
  if (to === "REVOKED") {
    // contract §6: the app stops using tokens for a revoked install; keep no secret it cannot use.
    await tx.tokenGrant.deleteMany({ where: { installRowId } });
  }
  await tx.installEvent.create({
    data: { installRowId, fromStatus: row.status, toStatus: to, cause, detail, occurredAt: now },
  });
  // In this transaction: the alert (install.needs_reauth, .recovered, ...) commits with the move, once.
  await alertOnTransition(tx, installRowId, row.status, to, cause, detail?.startsWith(REFRESH_ANSWER_LOST) === true);
  return true;
}

/**
 * contract §7: a 403 NEEDS_REAUTH flags the install; keep where to send the operator (reauth_url).
 * lib/installs/reauth.ts says how the flag clears.
 */
export async function flagNeedsReauth(installRowId: string, reauthUrl: string | null, cause: TransitionCause): Promise<void> {
  const moved = await db().$transaction(async (tx) => {
    const changed = await transitionInstall(tx, installRowId, "NEEDS_REAUTH", cause, "403 NEEDS_REAUTH: the app's scopes were widened");
    // A newer reauth_url replaces an older one even if the install was already flagged. The flag is
    // the API's latest word on the install: the next re-authorization probe counts from it
    // (lib/installs/reauth.ts).
    await tx.install.update({ where: { id: installRowId }, data: { lastReconciledAt: new Date(), ...(reauthUrl ? { reauthUrl } : {}) } });
    return changed;
  });
  if (moved) logger.warn({ installRowId }, "install needs re-authorization; the app stops calling the API for it");
}

