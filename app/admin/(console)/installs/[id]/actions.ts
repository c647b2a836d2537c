"use server";
// Server actions of the staff console's install page. Each is a public endpoint (anyone can POST to
// it), so each checks its caller first: runConsoleAction starts with requireStaffRole("operator"),
// then reads the form with zod, acts, and writes the attempt to the audit log (lib/admin/actions.ts).
// A POST from another site never reaches them: proxy.ts refuses it (lib/http/cross-site.ts).
//
// The actions take (previous result, form) as React's useActionState calls them
// (actions-panel.tsx), and return the sentence the panel shows.
import { revalidatePath } from "next/cache";
import { runConsoleAction, type ConsoleAction, type ConsoleActionResult } from "@/lib/admin/actions";
import { formOf } from "@/lib/http/server-action-body";

async function act(action: ConsoleAction, formData: FormData): Promise<ConsoleActionResult> {
  const result = await runConsoleAction(action, formOf(formData));
  // The page's other sections (status, tokens, history) show what the action changed.
  if (result.ok) revalidatePath("/admin/installs/[id]", "page");
  return result;
}

/** Refresh the install's tokens now (one refresh per install at a time, lib/oauth/refresh.ts). */
export async function refreshNowAction(_previous: ConsoleActionResult | null, formData: FormData): Promise<ConsoleActionResult> {
  return act("refresh", formData);
}

/** Check the install against the API now (lib/installs/reconcile.ts). */
export async function reconcileNowAction(_previous: ConsoleActionResult | null, formData: FormData): Promise<ConsoleActionResult> {
  return act("reconcile", formData);
}

/** Queue the install's sync for the worker, unless one is queued or running (lib/jobs/enqueue.ts). */
export async function syncNowAction(_previous: ConsoleActionResult | null, formData: FormData): Promise<ConsoleActionResult> {
  return act("sync", formData);
}

/** Stop every call for the install until the operator opens the app from the portal again. */
export async function markForReinstallAction(_previous: ConsoleActionResult | null, formData: FormData): Promise<ConsoleActionResult> {
  return act("mark_reinstall", formData);
}

/** One API call to see whether a flagged install's operator has re-consented (lib/installs/reauth.ts). */
export async function checkReauthorizationNowAction(_previous: ConsoleActionResult | null, formData: FormData): Promise<ConsoleActionResult> {
  return act("check_reauth", formData);
}

/**
 * "Check now" in the page's re-authorization box, a plain form action (no result shown): the same
 * checks, the same audit line as the panel's button.
 */
export async function checkReauthorizationAction(formData: FormData): Promise<void> {
  await act("check_reauth", formData);
}

/** End the rate-limit hold the service's answer put on the install (lib/partner-api/budget.ts). */
export async function clearBudgetHoldAction(_previous: ConsoleActionResult | null, formData: FormData): Promise<ConsoleActionResult> {
  return act("clear_budget_hold", formData);
}
