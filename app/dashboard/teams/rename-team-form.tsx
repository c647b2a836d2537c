"use client";
// One team's rename form. useActionState keeps the server action's answer: on a failure the field
// shows what the operator typed (React resets a form after its action; the field's default is the
// state's name), and the message says what happened. Works without JavaScript too (a plain POST).
import { useActionState } from "react";
import { useI18n } from "../_components/i18n";
import { renameTeamAction } from "./actions";
import { teamsTranslator } from "./i18n";
import type { RenameFormState } from "./rename-messages";

export function RenameTeamForm({ teamId, currentName }: { teamId: string; currentName: string }) {
  const [state, action, pending] = useActionState<RenameFormState, FormData>(renameTeamAction, { status: "idle", name: currentName });
  const inputId = `team-name-${teamId}`;
  const t = teamsTranslator(useI18n().locale);
  return (
    <form action={action} className="flex flex-col gap-2 sm:flex-row sm:items-start" data-testid="rename-team-form">
      <input type="hidden" name="teamId" value={teamId} />
      <label htmlFor={inputId} className="sr-only">
        {t("teams.rename.label", { name: currentName || t("teams.rename.unnamed", { id: teamId }) })}
      </label>
      <input
        id={inputId}
        // A new key after each answer re-applies defaultValue: the saved name, or what was typed.
        key={`${state.status}:${state.name}`}
        name="name"
        defaultValue={state.name}
        maxLength={100}
        required
        aria-invalid={state.status === "error" ? true : undefined}
        aria-describedby={state.message ? `${inputId}-message` : undefined}
        className="w-full min-w-0 rounded-md border border-slate-300 px-3 py-1.5 text-sm sm:max-w-xs"
      />
      <button
        type="submit"
        disabled={pending}
        className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-60"
      >
        {pending ? t("teams.rename.saving") : t("teams.rename.submit")}
      </button>
      {state.message ? (
        <p
          id={`${inputId}-message`}
          role={state.status === "error" ? "alert" : "status"}
          data-testid="rename-team-message"
          data-reason={state.reason}
          className={`text-sm sm:self-center ${state.status === "error" ? "text-red-700" : "text-emerald-700"}`}
        >
          {state.message}
        </p>
      ) : null}
    </form>
  );
}
