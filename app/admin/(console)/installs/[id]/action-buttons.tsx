"use client";
// The actions panel's forms: one per action, each posting to its server action and showing the
// sentence it answers (useActionState). Plain forms, so they also work before the page's scripts
// have loaded. The server decides everything; this only presents it.
import { useActionState } from "react";
import type { ConsoleAction, ConsoleActionResult } from "@/lib/admin/actions";
import { checkReauthorizationNowAction, clearBudgetHoldAction, markForReinstallAction, reconcileNowAction, refreshNowAction, syncNowAction } from "./actions";

type ServerAction = (previous: ConsoleActionResult | null, formData: FormData) => Promise<ConsoleActionResult>;

const ACTIONS: Record<ConsoleAction, { label: string; explains: string; run: ServerAction; danger?: boolean }> = {
  refresh: {
    label: "Refresh tokens now",
    explains: "One token refresh; a refresh already under way for this install is joined, never doubled.",
    run: refreshNowAction,
  },
  reconcile: {
    label: "Reconcile now",
    explains: "One call to the API: is the install still there, and as the app thinks?",
    run: reconcileNowAction,
  },
  sync: {
    label: "Sync now",
    explains: "Queues this install's sync for the worker, unless one is already queued or running.",
    run: syncNowAction,
  },
  check_reauth: {
    label: "Check re-authorization now",
    explains: "One call to the API: clears the flag if the operator has approved.",
    run: checkReauthorizationNowAction,
  },
  clear_budget_hold: {
    label: "Clear the rate-limit hold",
    explains: "The service's answer holds this install's calls (see Rate budget). Clear it when you know the service meant no such wait.",
    run: clearBudgetHoldAction,
  },
  mark_reinstall: {
    label: "Mark for re-install",
    explains: "Stops every API and token call for this install. The operator must open the app from their portal to use it again.",
    run: markForReinstallAction,
    danger: true,
  },
};

const ORDER = Object.keys(ACTIONS) as ConsoleAction[];

/**
 * Every action keeps its place in the tree, offered or not, so its last result stays on screen when
 * the action itself changed what is offered (after "Mark for re-install" nothing is, but staff must
 * still read that it worked). An action not offered shows only that result, never a button.
 */
export function ActionButtons({ installRowId, actions }: { installRowId: string; actions: ConsoleAction[] }) {
  return (
    <ul className="mt-3 divide-y divide-slate-100">
      {ORDER.map((action) => (
        <ActionForm key={action} action={action} installRowId={installRowId} offered={actions.includes(action)} />
      ))}
    </ul>
  );
}

function ActionForm({ action, installRowId, offered }: { action: ConsoleAction; installRowId: string; offered: boolean }) {
  const { label, explains, run, danger } = ACTIONS[action];
  const [result, formAction, pending] = useActionState(run, null);
  const shown = result ? <ActionResult action={action} result={result} /> : null;
  if (!offered) return shown ? <li className="py-3 first:pt-0 last:pb-0">{shown}</li> : null;
  return (
    <li className="py-3 first:pt-0 last:pb-0">
    <form action={formAction} data-action={action} className="space-y-2">
      <input type="hidden" name="installRowId" value={installRowId} />
      <div className="flex flex-col gap-2 sm:flex-row sm:items-start sm:gap-4">
        <button
          type="submit"
          disabled={pending}
          className={`shrink-0 rounded-md border px-3 py-1.5 text-sm font-medium disabled:opacity-60 ${
            danger ? "border-red-300 bg-white text-red-800 hover:bg-red-50" : "border-slate-300 bg-white text-slate-900 hover:bg-slate-50"
          }`}
        >
          {pending ? "Working…" : label}
        </button>
        <p className="text-sm text-slate-600">{explains}</p>
      </div>
      {danger ? (
        <label className="flex items-start gap-2 text-sm text-slate-700">
          <input type="checkbox" name="confirm" value="yes" required className="mt-0.5" />
          <span>I understand: the operator is cut off until they open the app again from their portal.</span>
        </label>
      ) : null}
      {shown}
    </form>
    </li>
  );
}

function ActionResult({ action, result }: { action: ConsoleAction; result: ConsoleActionResult }) {
  return (
    <p
      role="status"
      data-testid={`action-result-${action}`}
      data-ok={result.ok}
      className={`rounded-md px-3 py-2 text-sm ${result.ok ? "bg-emerald-50 text-emerald-900" : "bg-amber-50 text-amber-900"}`}
    >
      {result.message}
    </p>
  );
}
