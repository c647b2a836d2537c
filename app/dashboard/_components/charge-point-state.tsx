// A charge point's state in words and colour (public-facts.md "Records": the states the service
// lists). One place for the words and the colours, so the list, the detail page and the overview's
// "charge points by state" tile agree. Colour is never the only signal: the words are always shown,
// and the dot is decorative (aria-hidden).
import { humanize } from "./words";

type Tone = "green" | "blue" | "violet" | "amber" | "red" | "slate";

const STATES: Record<string, { label: string; tone: Tone }> = {
  available: { label: "Available", tone: "green" },
  busy: { label: "In use", tone: "blue" },
  "busy-charging": { label: "Charging", tone: "blue" },
  "busy-non-charging": { label: "Plugged in, not charging", tone: "blue" },
  "busy-non-released": { label: "Finished, still plugged in", tone: "blue" },
  "busy-blocked": { label: "Blocked", tone: "amber" },
  "busy-reserved": { label: "Reserved", tone: "violet" },
  "busy-scheduled": { label: "Scheduled", tone: "violet" },
  maintenance: { label: "Maintenance", tone: "amber" },
  error: { label: "Error", tone: "red" },
  disconnected: { label: "Offline", tone: "slate" },
  passive: { label: "Passive", tone: "slate" },
  other: { label: "Other", tone: "slate" },
};

const TONES: Record<Tone, { badge: string; dot: string }> = {
  green: { badge: "bg-emerald-50 text-emerald-800 ring-emerald-200", dot: "bg-emerald-500" },
  blue: { badge: "bg-sky-50 text-sky-800 ring-sky-200", dot: "bg-sky-500" },
  violet: { badge: "bg-violet-50 text-violet-800 ring-violet-200", dot: "bg-violet-500" },
  amber: { badge: "bg-amber-50 text-amber-900 ring-amber-200", dot: "bg-amber-500" },
  red: { badge: "bg-red-50 text-red-800 ring-red-200", dot: "bg-red-500" },
  slate: { badge: "bg-slate-100 text-slate-700 ring-slate-200", dot: "bg-slate-400" },
};

/** The words for a state; a state the contract did not list is shown as given, made readable. */
export function chargePointStateLabel(state: string | null | undefined): string {
  if (!state) return "Unknown";
  return STATES[state]?.label ?? humanize(state);
}

/** The colour of a state, as a CSS colour a chart can use too (Tailwind 4's palette variables). */
export function chargePointStateColor(state: string | null | undefined): string {
  const tone = (state && STATES[state]?.tone) || "slate";
  const shade: Record<Tone, string> = {
    green: "var(--color-emerald-500)",
    blue: "var(--color-sky-500)",
    violet: "var(--color-violet-500)",
    amber: "var(--color-amber-500)",
    red: "var(--color-red-500)",
    slate: "var(--color-slate-400)",
  };
  return shade[tone];
}

export function ChargePointStateBadge({ state }: { state: string | null | undefined }) {
  const tone = TONES[(state && STATES[state]?.tone) || "slate"];
  return (
    <span className={`inline-flex items-center gap-1.5 whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${tone.badge}`} data-state={state ?? ""}>
      <span className={`size-1.5 shrink-0 rounded-full ${tone.dot}`} aria-hidden="true" />
      {chargePointStateLabel(state)}
    </span>
  );
}

/** "AC · 22 kW", "DC · 150 kW". */
export function powerLabel(type: string | null | undefined, maxKw: number | null | undefined): string {
  const kind = type === "ac" || type === "dc" ? type.toUpperCase() : type ? humanize(type) : null;
  const power = maxKw !== null && maxKw !== undefined ? `${new Intl.NumberFormat("en-GB", { maximumFractionDigits: 1 }).format(maxKw)} kW` : null;
  return [kind, power].filter(Boolean).join(" · ") || "—";
}
