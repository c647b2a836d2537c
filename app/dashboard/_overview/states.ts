// Charge point states in words and colours (public-facts.md "Records" lists them). The service
// sends short codes such as `busy-charging`; an operator reads "Charging". A state this list does not
// know (the service may add one) is shown as given, in grey, never dropped.
export type StateStyle = { label: string; /** chart fill */ color: string; /** Tailwind classes of the legend's swatch */ swatch: string };

const STATES: Record<string, StateStyle> = {
  available: { label: "Available", color: "#16a34a", swatch: "bg-green-600" },
  busy: { label: "In use", color: "#2563eb", swatch: "bg-blue-600" },
  "busy-charging": { label: "Charging", color: "#2563eb", swatch: "bg-blue-600" },
  "busy-non-charging": { label: "Plugged in, not charging", color: "#0ea5e9", swatch: "bg-sky-500" },
  "busy-blocked": { label: "Blocked", color: "#d97706", swatch: "bg-amber-600" },
  "busy-non-released": { label: "Cable not released", color: "#d97706", swatch: "bg-amber-600" },
  "busy-reserved": { label: "Reserved", color: "#7c3aed", swatch: "bg-violet-600" },
  "busy-scheduled": { label: "Scheduled", color: "#7c3aed", swatch: "bg-violet-600" },
  error: { label: "Error", color: "#dc2626", swatch: "bg-red-600" },
  disconnected: { label: "Offline", color: "#475569", swatch: "bg-slate-600" },
  maintenance: { label: "Maintenance", color: "#ea580c", swatch: "bg-orange-600" },
  passive: { label: "Passive", color: "#94a3b8", swatch: "bg-slate-400" },
  other: { label: "Other", color: "#a1a1aa", swatch: "bg-zinc-400" },
};

const UNKNOWN: Omit<StateStyle, "label"> = { color: "#a1a1aa", swatch: "bg-zinc-400" };

export function stateStyle(state: string | null): StateStyle {
  if (state === null) return { label: "No state", ...UNKNOWN };
  return STATES[state] ?? { label: state, ...UNKNOWN };
}
