// A charging session's (charge's) state and type in words (public-facts.md "Records"), with a colour
// that follows from the words: one place, so the list, the detail page and the export's readers agree.
import { humanize } from "./words";

const STATES: Record<string, { label: string; tone: string }> = {
  paying: { label: "Paying", tone: "bg-sky-50 text-sky-800 ring-sky-200" },
  reserved: { label: "Reserved", tone: "bg-violet-50 text-violet-800 ring-violet-200" },
  scheduled: { label: "Scheduled", tone: "bg-violet-50 text-violet-800 ring-violet-200" },
  starting: { label: "Starting", tone: "bg-sky-50 text-sky-800 ring-sky-200" },
  charging: { label: "Charging", tone: "bg-sky-50 text-sky-800 ring-sky-200" },
  paused: { label: "Paused", tone: "bg-amber-50 text-amber-900 ring-amber-200" },
  stopping: { label: "Stopping", tone: "bg-sky-50 text-sky-800 ring-sky-200" },
  stopped: { label: "Stopped", tone: "bg-slate-100 text-slate-700 ring-slate-200" },
  releasing: { label: "Releasing", tone: "bg-slate-100 text-slate-700 ring-slate-200" },
  released: { label: "Released", tone: "bg-slate-100 text-slate-700 ring-slate-200" },
  completed: { label: "Completed", tone: "bg-emerald-50 text-emerald-800 ring-emerald-200" },
  other: { label: "Other", tone: "bg-red-50 text-red-800 ring-red-200" },
};

const TYPES: Record<string, string> = { external: "External", operator: "Operator", sponsored: "Sponsored" };

// Stop and failure reasons: strings whose values the contract does not list (public-facts.md names
// the fields only); the ones the sandbox sends get words, any other is shown as given, made readable.
const REASONS: Record<string, string> = {
  user: "Stopped by the driver",
  "ev-full": "Vehicle full",
  remote: "Stopped remotely",
  "idle-timeout": "Idle too long",
  "connector-error": "Connector error",
  "authorization-rejected": "Authorization rejected",
  "ev-communication-error": "Could not talk to the vehicle",
};

export function sessionReasonLabel(reason: string): string {
  return REASONS[reason] ?? humanize(reason);
}

export function sessionStateLabel(state: string | null | undefined): string {
  if (!state) return "Unknown";
  return STATES[state]?.label ?? humanize(state);
}

export function sessionTypeLabel(type: string | null | undefined): string {
  if (!type) return "—";
  return TYPES[type] ?? humanize(type);
}

export function SessionStateBadge({ state }: { state: string | null | undefined }) {
  const tone = (state && STATES[state]?.tone) || "bg-slate-100 text-slate-700 ring-slate-200";
  return (
    <span className={`inline-flex whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${tone}`} data-state={state ?? ""}>
      {sessionStateLabel(state)}
    </span>
  );
}
