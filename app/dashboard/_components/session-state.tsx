// A charging session's (charge's) state and type in words (public-facts.md "Records"), with a colour
// that follows from the words: one place, so the list, the detail page and the export's readers agree.
import { translator, type MessageKey, type Translator } from "@/lib/i18n/messages";
import { humanize } from "./words";

/** English, for a caller without a request; pages pass the operator's translator (lib/i18n/request.ts). */
const ENGLISH = translator("en");

// The words are in the catalogue (messages/*.json): `sessionState.<state>`, `sessionType.<type>`, `stopReason.<reason>`.
const STATES: Record<string, { label: MessageKey; tone: string }> = {
  paying: { label: "sessionState.paying", tone: "bg-sky-50 text-sky-800 ring-sky-200" },
  reserved: { label: "sessionState.reserved", tone: "bg-violet-50 text-violet-800 ring-violet-200" },
  scheduled: { label: "sessionState.scheduled", tone: "bg-violet-50 text-violet-800 ring-violet-200" },
  starting: { label: "sessionState.starting", tone: "bg-sky-50 text-sky-800 ring-sky-200" },
  charging: { label: "sessionState.charging", tone: "bg-sky-50 text-sky-800 ring-sky-200" },
  paused: { label: "sessionState.paused", tone: "bg-amber-50 text-amber-900 ring-amber-200" },
  stopping: { label: "sessionState.stopping", tone: "bg-sky-50 text-sky-800 ring-sky-200" },
  stopped: { label: "sessionState.stopped", tone: "bg-slate-100 text-slate-700 ring-slate-200" },
  releasing: { label: "sessionState.releasing", tone: "bg-slate-100 text-slate-700 ring-slate-200" },
  released: { label: "sessionState.released", tone: "bg-slate-100 text-slate-700 ring-slate-200" },
  completed: { label: "sessionState.completed", tone: "bg-emerald-50 text-emerald-800 ring-emerald-200" },
  other: { label: "sessionState.other", tone: "bg-red-50 text-red-800 ring-red-200" },
};

const TYPES: Record<string, MessageKey> = { external: "sessionType.external", operator: "sessionType.operator", sponsored: "sessionType.sponsored" };

// Stop and failure reasons: strings whose values the contract does not list (public-facts.md names
// the fields only); the ones the sandbox sends get words, any other is shown as given, made readable.
const REASONS: Record<string, MessageKey> = {
  user: "stopReason.user",
  "ev-full": "stopReason.ev-full",
  remote: "stopReason.remote",
  "idle-timeout": "stopReason.idle-timeout",
  "connector-error": "stopReason.connector-error",
  "authorization-rejected": "stopReason.authorization-rejected",
  "ev-communication-error": "stopReason.ev-communication-error",
};

export function sessionReasonLabel(reason: string, t: Translator = ENGLISH): string {
  const key = REASONS[reason];
  return key ? t(key) : humanize(reason);
}

export function sessionStateLabel(state: string | null | undefined, t: Translator = ENGLISH): string {
  if (!state) return t("sessionState.unknown");
  const known = STATES[state];
  return known ? t(known.label) : humanize(state);
}

export function sessionTypeLabel(type: string | null | undefined, t: Translator = ENGLISH): string {
  if (!type) return "—";
  const key = TYPES[type];
  return key ? t(key) : humanize(type);
}

export function SessionStateBadge({ state, t = ENGLISH }: { state: string | null | undefined; t?: Translator }) {
  const tone = (state && STATES[state]?.tone) || "bg-slate-100 text-slate-700 ring-slate-200";
  return (
    <span className={`inline-flex whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${tone}`} data-state={state ?? ""}>
      {sessionStateLabel(state, t)}
    </span>
  );
}
