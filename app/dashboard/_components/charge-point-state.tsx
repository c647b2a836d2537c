// A charge point's state in words and colour (public-facts.md "Records": the states the service
// lists). One place for the words and the colours, so the list, the detail page and the overview's
// "charge points by state" tile agree. Colour is never the only signal: the words are always shown,
// and the dot is decorative (aria-hidden).
import { formatterFor, type Formatter } from "@/lib/i18n/format";
import { translator, type MessageKey, type Translator } from "@/lib/i18n/messages";
import { humanize } from "./words";

/** English and UTC, for a caller that has no request (a test, a script); pages pass the operator's. */
const ENGLISH = translator("en");
const ENGLISH_FORMATS = formatterFor("en", "UTC");

type Tone = "green" | "blue" | "violet" | "amber" | "red" | "slate";

/**
 * `chart`: the state's own colour in charts and in their legends, where every state must differ even
 * within a tone (tests/unit/charge-point-state.test.ts checks that no two share one).
 */
// The words are in the catalogue (messages/*.json, `state.<state>`), in the operator's language.
const STATES: Record<string, { label: MessageKey; tone: Tone; chart: string }> = {
  available: { label: "state.available", tone: "green", chart: "#16a34a" },
  busy: { label: "state.busy", tone: "blue", chart: "#1e40af" },
  "busy-charging": { label: "state.busy-charging", tone: "blue", chart: "#2563eb" },
  "busy-non-charging": { label: "state.busy-non-charging", tone: "blue", chart: "#0ea5e9" },
  "busy-non-released": { label: "state.busy-non-released", tone: "blue", chart: "#0891b2" },
  "busy-blocked": { label: "state.busy-blocked", tone: "amber", chart: "#d97706" },
  "busy-reserved": { label: "state.busy-reserved", tone: "violet", chart: "#7c3aed" },
  "busy-scheduled": { label: "state.busy-scheduled", tone: "violet", chart: "#a855f7" },
  maintenance: { label: "state.maintenance", tone: "amber", chart: "#ea580c" },
  error: { label: "state.error", tone: "red", chart: "#dc2626" },
  disconnected: { label: "state.disconnected", tone: "slate", chart: "#475569" },
  passive: { label: "state.passive", tone: "slate", chart: "#94a3b8" },
  other: { label: "state.other", tone: "slate", chart: "#a1a1aa" },
};

/** A state the list does not know: grey, in charts too (a grey no known state uses). */
export const UNKNOWN_CHART_COLOR = "#78716c";

const TONES: Record<Tone, { badge: string; dot: string }> = {
  green: { badge: "bg-emerald-50 text-emerald-800 ring-emerald-200", dot: "bg-emerald-500" },
  blue: { badge: "bg-sky-50 text-sky-800 ring-sky-200", dot: "bg-sky-500" },
  violet: { badge: "bg-violet-50 text-violet-800 ring-violet-200", dot: "bg-violet-500" },
  amber: { badge: "bg-amber-50 text-amber-900 ring-amber-200", dot: "bg-amber-500" },
  red: { badge: "bg-red-50 text-red-800 ring-red-200", dot: "bg-red-500" },
  slate: { badge: "bg-slate-100 text-slate-700 ring-slate-200", dot: "bg-slate-400" },
};

/** The words for a state; a state the contract did not list is shown as given, made readable. */
export function chargePointStateLabel(state: string | null | undefined, t: Translator = ENGLISH): string {
  if (!state) return t("state.unknown");
  const known = STATES[state];
  return known ? t(known.label) : humanize(state);
}

/** The states the contract lists (public-facts.md "Records"), for the tests. */
export const KNOWN_CHARGE_POINT_STATES = Object.keys(STATES);

/**
 * What a chart and its legend need: the words and the state's colour. The legend's dot takes the
 * same colour as the bar (not the badge's tone), so each dot names its own bar.
 */
export function chargePointStateStyle(state: string | null | undefined, t: Translator = ENGLISH): { label: string; color: string } {
  const known = state ? STATES[state] : undefined;
  return { label: chargePointStateLabel(state, t), color: known?.chart ?? UNKNOWN_CHART_COLOR };
}

export function ChargePointStateBadge({ state, t = ENGLISH }: { state: string | null | undefined; t?: Translator }) {
  const tone = TONES[(state && STATES[state]?.tone) || "slate"];
  return (
    <span className={`inline-flex items-center gap-1.5 whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${tone.badge}`} data-state={state ?? ""}>
      <span className={`size-1.5 shrink-0 rounded-full ${tone.dot}`} aria-hidden="true" />
      {chargePointStateLabel(state, t)}
    </span>
  );
}

/** "AC · 22 kW", "DC · 7,4 kW": the number through the formatter module, which builds its Intl formatter once. */
export function powerLabel(type: string | null | undefined, maxKw: number | null | undefined, f: Formatter = ENGLISH_FORMATS): string {
  const kind = type === "ac" || type === "dc" ? type.toUpperCase() : type ? humanize(type) : null;
  const power = maxKw !== null && maxKw !== undefined ? f.kw(maxKw) : null;
  return [kind, power].filter(Boolean).join(" · ") || "—";
}
