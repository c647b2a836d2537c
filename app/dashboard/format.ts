// How the dashboard writes numbers, amounts, energy, durations and times: one place, so every page
// agrees. Dates are shown in UTC and say so: the service's records carry UTC instants and the
// contract gives no operator time zone (a fork that knows its operators' zones changes `TIME_ZONE`).
export const TIME_ZONE = "UTC";
const LOCALE = "en-GB";

const dateTime = new Intl.DateTimeFormat(LOCALE, { timeZone: TIME_ZONE, dateStyle: "medium", timeStyle: "short" });
const dateOnly = new Intl.DateTimeFormat(LOCALE, { timeZone: TIME_ZONE, dateStyle: "medium" });

export function formatDateTime(value: Date | null | undefined): string {
  return value ? `${dateTime.format(value)} UTC` : "—";
}

const timeOnly = new Intl.DateTimeFormat(LOCALE, { timeZone: TIME_ZONE, timeStyle: "short" });

/** The time of day with its zone, "05:13 UTC": beside formatDate where a narrow column splits the two. */
export function formatTime(value: Date | null | undefined): string {
  return value ? `${timeOnly.format(value)} UTC` : "—";
}

export function formatDate(value: Date | null | undefined): string {
  return value ? dateOnly.format(value) : "—";
}

/** An amount in its currency (ISO 4217), with the currency's own decimals when the record gives them. */
export function formatMoney(amount: number | null | undefined, currency: string | null | undefined, decimals?: number | null): string {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return "—";
  if (!currency) return amount.toFixed(decimals ?? 2);
  try {
    return new Intl.NumberFormat(LOCALE, {
      style: "currency",
      currency,
      minimumFractionDigits: decimals ?? undefined,
      maximumFractionDigits: decimals ?? undefined,
    }).format(amount);
  } catch {
    // A code Intl does not know (the service's list is not shown): the number and the code as given.
    return `${amount.toFixed(decimals ?? 2)} ${currency}`;
  }
}

export function formatKwh(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "—";
  return `${new Intl.NumberFormat(LOCALE, { maximumFractionDigits: value >= 100 ? 0 : 1 }).format(value)} kWh`;
}

/** 1 h 25 min, 12 min, 40 s. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "—";
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return `${Math.round(ms / 1000)} s`;
  const hours = Math.floor(minutes / 60);
  return hours > 0 ? `${hours} h ${minutes % 60} min` : `${minutes} min`;
}

export function formatCount(value: number): string {
  return new Intl.NumberFormat(LOCALE).format(value);
}
