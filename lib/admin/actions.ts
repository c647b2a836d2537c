// The staff console's actions on one install (issue 14), as the server actions in
// app/admin/(console)/installs/[id]/actions.ts call them:
//
//   refresh          refresh the install's tokens now, through the refresh coordinator
//                    (lib/oauth/refresh.ts): one refresh per install at a time, across processes, so
//                    a click while another refresh is in flight joins it instead of sending a second
//   reconcile        check the install against the API now (lib/installs/reconcile.ts)
//   sync             queue the install's sync for the worker (lib/jobs/enqueue.ts), unless one is
//                    already queued or running
//   mark_reinstall   stop every call for the install: REINSTALL_NEEDED (lib/installs/state.ts), the
//                    state in which pages, keep-alive, the sweep and the sync all leave it alone
//                    until the operator opens the app from the portal again (a new consent)
//   check_reauth     ask the API once whether a flagged install was re-authorized (lib/installs/reauth.ts)
//   clear_budget_hold  end a rate-limit hold the service's answer put on the install
//                    (lib/partner-api/budget.ts): offered only while one is in force
//
// Every attempt goes the same way (runConsoleAction):
//   1. who: requireStaffRole("operator"). No staff session: the sign-in page, nothing done, nothing
//      recorded (there is no one to record). A viewer: refused, nothing done, the refusal recorded.
//   2. what: the form, through zod. Anything else: refused, recorded.
//   3. the action, recorded in the audit log (lib/admin/audit.ts) with its outcome.
// Cross-site posts never get this far: proxy.ts refuses them (lib/http/cross-site.ts).
//
// The result is one sentence for the page. It is built here from known outcomes only, never from a
// library's or the service's error text, so it cannot carry a token, a secret or a code.
import "server-only";
import { z } from "zod";
import { requireStaffRole, StaffRoleRefusedError, type StaffIdentity } from "@/lib/auth/staff";
import { db } from "@/lib/db/client";
import type { InstallStatus } from "@/lib/db/generated/enums";
import { probeReauthorization } from "@/lib/installs/reauth";
import { reconcileInstall } from "@/lib/installs/reconcile";
import { transitionInstall } from "@/lib/installs/state";
import { enqueueSyncNow } from "@/lib/jobs/enqueue";
import { logger } from "@/lib/log";
import { clearBudgetHold } from "@/lib/partner-api/budget";
import { TokenCircuitOpenError } from "@/lib/oauth/circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "@/lib/oauth/errors";
import { refreshInstallTokens } from "@/lib/oauth/refresh";
import { ACTION_LABEL, finishStaffAction, recordStaffAction, startStaffAction, type AuditTarget, type ConsoleAction } from "./audit";

export type { ConsoleAction };

/** What the page shows after an action. `at` tells two results of the same action apart. */
export type ConsoleActionResult = { action: ConsoleAction; ok: boolean; outcome: string; message: string; at: string };

const InstallFormSchema = z.object({ installRowId: z.uuid() });

/** Each action's form. Marking for re-install also needs its box ticked: it cuts the operator off. */
const FORM_SCHEMAS: Record<ConsoleAction, z.ZodType<{ installRowId: string }>> = {
  refresh: InstallFormSchema,
  reconcile: InstallFormSchema,
  sync: InstallFormSchema,
  check_reauth: InstallFormSchema,
  clear_budget_hold: InstallFormSchema,
  mark_reinstall: InstallFormSchema.extend({
    confirm: z.literal("yes", { error: "Tick the box to confirm: the operator must open the app from their portal to use it again." }),
  }),
};

type Outcome = { ok: boolean; outcome: string; message: string };
type Install = { id: string; installId: number | null; status: InstallStatus };
/** What the panel offers actions by: the install's state, and whether its rate budget is held. */
type ActionTarget = Install & { budgetHeld: boolean };

/** Runs one console action for the signed-in staff member, from its form. See the top of this file. */
export async function runConsoleAction(action: ConsoleAction, formData: FormData): Promise<ConsoleActionResult> {
  const result = (outcome: Outcome): ConsoleActionResult => ({ action, ...outcome, at: new Date().toISOString() });
  // The install the form names, for the audit line, even when the rest of the form is refused.
  const named = InstallFormSchema.shape.installRowId.safeParse(formData.get("installRowId"));
  const namedRowId = named.success ? named.data.toLowerCase() : null;

  let staff: StaffIdentity;
  try {
    staff = await requireStaffRole("operator");
  } catch (error) {
    if (!(error instanceof StaffRoleRefusedError)) throw error; // the sign-in redirect, among others
    const refused: Outcome = {
      ok: false,
      outcome: "refused_role",
      message: `Not done: you are signed in as a console ${error.staff.role}, and ${ACTION_LABEL[action].toLowerCase()} needs the operator role.`,
    };
    await recordStaffAction(error.staff, action, await auditTarget(namedRowId), refused.outcome, refused.message);
    logger.warn({ staff: error.staff.email, role: error.staff.role, action, installRowId: namedRowId }, "console action refused: the staff member's role does not allow it");
    return result(refused);
  }

  // The first value of each field, as for the audit line above (a repeated field cannot make the
  // line name one install and the action touch another).
  const form = FORM_SCHEMAS[action].safeParse({ installRowId: formData.get("installRowId"), confirm: formData.get("confirm") ?? undefined });
  if (!form.success) {
    const refused: Outcome = { ok: false, outcome: "invalid_form", message: `Not done: ${form.error.issues[0]?.message ?? "the form was not understood"}` };
    // zod's messages here are ours (above) or its own about a field's shape: they never echo a value.
    await recordStaffAction(staff, action, await auditTarget(namedRowId), refused.outcome, refused.message);
    return result(refused);
  }

  const install = await db().install.findUnique({ where: { id: form.data.installRowId }, select: { id: true, installId: true, status: true } });
  if (!install) {
    const missing: Outcome = { ok: false, outcome: "not_found", message: "Not done: there is no such install." };
    await recordStaffAction(staff, action, { installRowId: form.data.installRowId, installId: null }, missing.outcome, missing.message);
    return result(missing);
  }

  let outcome: Outcome;
  try {
    outcome = await perform(action, staff, install);
  } catch (error) {
    // A transaction that failed wrote nothing, its audit line included: record the failure apart,
    // if the database takes it, and tell staff plainly rather than show an error page.
    logger.error({ err: error, action, installRowId: install.id }, "console action failed");
    outcome = FAILED;
    await recordStaffAction(staff, action, { installRowId: install.id, installId: install.installId }, outcome.outcome, outcome.message).catch(() => undefined);
  }
  logger.info({ staff: staff.email, action, installRowId: install.id, outcome: outcome.outcome }, "console action");
  return result(outcome);
}

const FAILED: Outcome = { ok: false, outcome: "failed", message: "Failed: something went wrong on our side (the app's log has the cause). Try again." };

async function auditTarget(installRowId: string | null): Promise<AuditTarget> {
  if (!installRowId) return { installRowId: null, installId: null };
  const install = await db().install.findUnique({ where: { id: installRowId }, select: { installId: true } });
  return { installRowId, installId: install?.installId ?? null };
}

async function perform(action: ConsoleAction, staff: StaffIdentity, install: Install): Promise<Outcome> {
  const target = { installRowId: install.id, installId: install.installId };
  switch (action) {
    // Ours to write: the audit line in the same transaction as the write.
    case "mark_reinstall":
      return markForReinstall(staff, install);
    case "sync":
      return syncNow(staff, install);
    case "clear_budget_hold":
      return clearHoldNow(staff, install);
    // Calls out: a pending line first, its outcome after.
    case "refresh":
      return withPendingLine(staff, action, target, () => refreshNow(install));
    case "reconcile":
      return withPendingLine(staff, action, target, () => reconcileNow(install));
    case "check_reauth":
      return withPendingLine(staff, action, target, () => checkReauthorizationNow(install));
  }
}

async function withPendingLine(staff: StaffIdentity, action: ConsoleAction, target: AuditTarget, run: () => Promise<Outcome>): Promise<Outcome> {
  const lineId = await startStaffAction(staff, action, target);
  let outcome: Outcome;
  try {
    outcome = await run();
  } catch (error) {
    logger.error({ err: error, action, installRowId: target.installRowId }, "console action failed");
    outcome = FAILED;
  }
  await finishStaffAction(lineId, outcome.outcome, outcome.message);
  return outcome;
}

// ----- the actions --------------------------------------------------------------------------------

/** Why the app will not use this install's token, in words, or null. */
function unusableWords(reason: NoUsableTokenError["reason"]): string {
  switch (reason) {
    case "no_grant":
      return "the app holds no tokens for this install";
    case "reinstall_needed":
      return "the install needs a re-install, so the app makes no calls for it";
    case "revoked":
      return "the install was uninstalled";
    case "needs_reauth":
      return "the install is waiting for the operator to re-authorize";
  }
}

function unavailableOutcome(error: unknown): Outcome | null {
  if (error instanceof TokenCircuitOpenError) {
    return {
      ok: false,
      outcome: "circuit_open",
      message: "Not done: every token refresh is paused because the identity provider rejected the app's client credentials (invalid_client). See the banner above.",
    };
  }
  if (error instanceof TokenRefreshUnavailableError) {
    return {
      ok: false,
      outcome: "unavailable",
      message: "Not done now: the identity provider did not answer, or an earlier refresh is still being settled. Nothing was lost; try again in a minute.",
    };
  }
  return null;
}

async function refreshNow(install: Install): Promise<Outcome> {
  const grant = await db().tokenGrant.findUnique({ where: { installRowId: install.id }, select: { version: true } });
  if (!grant) return { ok: false, outcome: "no_grant", message: "Not done: the app holds no tokens for this install." };
  try {
    // The version read now: the coordinator refreshes unless someone else already moved the grant
    // past it (then their fresh pair is the answer). A refresh in flight in this process is joined.
    const refreshed = await refreshInstallTokens(install.id, grant.version);
    const expiresAt = refreshed.expiresAt.toISOString().slice(0, 19).replace("T", " ");
    return { ok: true, outcome: "refreshed", message: `Refreshed: the install's tokens are version ${refreshed.version}; the access token expires at ${expiresAt} UTC.` };
  } catch (error) {
    if (error instanceof NoUsableTokenError) {
      return { ok: false, outcome: "not_usable", message: `Not done: ${unusableWords(error.reason)}. Nothing was sent.` };
    }
    const unavailable = unavailableOutcome(error);
    if (unavailable) return unavailable;
    throw error;
  }
}

async function reconcileNow(install: Install): Promise<Outcome> {
  if (install.status !== "ACTIVE") {
    return {
      ok: false,
      outcome: "skipped",
      message:
        install.status === "NEEDS_REAUTH"
          ? "Not done: a flagged install is not reconciled; use “Check re-authorization now”."
          : "Not done: only a connected install is reconciled; this one makes no calls.",
    };
  }
  // Interactive priority: someone is waiting for the answer (lib/partner-api/budget.ts).
  const outcome = await reconcileInstall(install.id, "interactive");
  switch (outcome) {
    case "live":
      return { ok: true, outcome: "live", message: "Reconciled: the API answers for this install; it is connected." };
    case "flagged":
      return { ok: true, outcome: "flagged", message: "Reconciled: the API says the install needs re-authorization (403 NEEDS_REAUTH); it is now flagged." };
    case "unusable":
      return { ok: true, outcome: "unusable", message: "Reconciled: the install's tokens no longer work; it now needs a re-install." };
    case "unavailable":
      return { ok: false, outcome: "unavailable", message: "Not done now: the API or the identity provider did not answer. Nothing was changed; try again later." };
    case "skipped":
      return { ok: false, outcome: "skipped", message: "Not done: the install changed state meanwhile; reload the page." };
  }
}

async function checkReauthorizationNow(install: Install): Promise<Outcome> {
  if (install.status !== "NEEDS_REAUTH") {
    return { ok: false, outcome: "skipped", message: "Not done: the install is not waiting for re-authorization." };
  }
  const outcome = await probeReauthorization(install.id, "staff", { force: true });
  switch (outcome) {
    case "cleared":
      return { ok: true, outcome: "cleared", message: "Checked: the operator has re-authorized; the install is connected again." };
    case "still_flagged":
      return { ok: true, outcome: "still_flagged", message: "Checked: the operator has not re-authorized yet. Send them the re-authorization link." };
    case "not_due":
      return { ok: false, outcome: "skipped", message: "Not done: the install changed state meanwhile; reload the page." };
    case "unavailable":
      return { ok: false, outcome: "unavailable", message: "Not done now: the API did not answer. Nothing was changed; try again later." };
  }
}

async function syncNow(staff: StaffIdentity, install: Install): Promise<Outcome> {
  const target = { installRowId: install.id, installId: install.installId };
  if (install.status !== "ACTIVE") {
    const skipped: Outcome = { ok: false, outcome: "skipped", message: "Not done: only a connected install is synced." };
    await recordStaffAction(staff, "sync", target, skipped.outcome, skipped.message);
    return skipped;
  }
  return db().$transaction(async (tx) => {
    const queued = await enqueueSyncNow(tx, install.id);
    const since = "since" in queued ? ` (since ${queued.since.toISOString().slice(0, 19).replace("T", " ")} UTC)` : "";
    const outcome: Outcome =
      queued.outcome === "queued"
        ? { ok: true, outcome: "queued", message: "Queued: the worker syncs this install next; the sync status shows when it ran." }
        : queued.outcome === "already_queued"
          ? { ok: true, outcome: "already_queued", message: `Nothing added: a sync of this install is already queued${since}; it will run.` }
          : { ok: true, outcome: "already_running", message: `Nothing added: a sync of this install is running${since}.` };
    await recordStaffAction(staff, "sync", target, outcome.outcome, outcome.message, tx);
    return outcome;
  });
}

async function clearHoldNow(staff: StaffIdentity, install: Install): Promise<Outcome> {
  const wasHeld = await clearBudgetHold(install.id);
  const outcome: Outcome = wasHeld
    ? { ok: true, outcome: "cleared", message: "Cleared: the install's rate budget is whole again; its calls go at once, from every instance." }
    : { ok: true, outcome: "no_hold", message: "Nothing to clear: no rate-limit hold was in force for this install." };
  await recordStaffAction(staff, "clear_budget_hold", { installRowId: install.id, installId: install.installId }, outcome.outcome, outcome.message);
  return outcome;
}

async function markForReinstall(staff: StaffIdentity, install: Install): Promise<Outcome> {
  const target = { installRowId: install.id, installId: install.installId };
  return db().$transaction(async (tx) => {
    // The state machine re-reads the status under a row lock: a revoked install stays revoked, and
    // an install already marked is not marked twice.
    const moved = await transitionInstall(tx, install.id, "REINSTALL_NEEDED", "staff", "marked for re-install from the staff console");
    const outcome: Outcome = moved
      ? {
          ok: true,
          outcome: "marked",
          message: "Marked for re-install: the app makes no more API or token calls for this install until the operator opens the app from their portal.",
        }
      : { ok: false, outcome: "no_change", message: "Not changed: the install already needs a re-install, or was uninstalled; the app makes no calls for it." };
    await recordStaffAction(staff, "mark_reinstall", target, outcome.outcome, outcome.message, tx);
    return outcome;
  });
}

// ----- the panel's read ------------------------------------------------------------------------------

/** The actions that make sense for an install in this state (the server actions check again). */
export function actionsFor({ status, budgetHeld }: Pick<ActionTarget, "status" | "budgetHeld">): ConsoleAction[] {
  switch (status) {
    case "ACTIVE":
      return ["refresh", "reconcile", "sync", ...(budgetHeld ? (["clear_budget_hold"] as const) : []), "mark_reinstall"];
    case "NEEDS_REAUTH":
      // Flagged: no data calls (contract §7), but its chain is kept alive and the flag can be checked.
      return ["check_reauth", "refresh", "mark_reinstall"];
    case "REINSTALL_NEEDED":
    case "REVOKED":
      return [];
  }
}

/** What the actions panel needs: the install's state and its budget's hold, or null when there is no such install. */
export async function fetchActionTarget(installRowId: string): Promise<ActionTarget | null> {
  const install = await db().install.findUnique({ where: { id: installRowId }, select: { id: true, installId: true, status: true, budget: { select: { heldUntil: true } } } });
  if (!install) return null;
  const { budget, ...rest } = install;
  return { ...rest, budgetHeld: (budget?.heldUntil?.getTime() ?? 0) > Date.now() };
}

