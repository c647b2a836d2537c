// The dashboard's one formatter module: dates, times, numbers, money, energy and durations, in the
// operator's language and time zone (lib/i18n/locales.ts `resolveDisplay` picks them). Every page
// formats through here, so every page agrees, and every time says its zone ("14:05 CET"): the
// service's records are UTC instants (contract §4.2) and a time without its zone is a guess.
//
// Building an Intl formatter is the expensive part (it loads locale data), so each one is built once
// per (locale, options, zone) and kept: a table of 100 rows formats 100 amounts with one formatter.
// The set of keys is small and bounded (shipped locales × a handful of options × the zones in use).
// Not server-only: the charts (client components) format their axes with it too.
import { LOCALES, type Locale } from "./locales";

const cache = new Map<string, Intl.DateTimeFormat | Intl.NumberFormat | Intl.PluralRules>();
/** A safety bound: zones come from requests, and a cache must not grow with what strangers send. */
const MAX_CACHED = 500;

function cached<T extends Intl.DateTimeFormat | Intl.NumberFormat | Intl.PluralRules>(key: string, build: () => T): T {
  const hit = cache.get(key);
  if (hit) return hit as T;
  const made = build();
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(key, made);
  return made;
}

export function dateTimeFormat(tag: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  return cached(`d|${tag}|${JSON.stringify(options)}`, () => new Intl.DateTimeFormat(tag, options));
}

export function numberFormat(tag: string, options: Intl.NumberFormatOptions = {}): Intl.NumberFormat {
  return cached(`n|${tag}|${JSON.stringify(options)}`, () => new Intl.NumberFormat(tag, options));
}

export function pluralRules(tag: string): Intl.PluralRules {
  return cached(`p|${tag}`, () => new Intl.PluralRules(tag));
}

/** How many Intl formatters are kept (for the tests that prove they are reused). */
export function cachedFormatterCount(): number {
  return cache.size;
}

/** The short words for hours, minutes, seconds: Intl has unit formats, but not this compact "1 h 25 min". */
const DURATION_UNITS: Record<Locale, { h: string; min: string; s: string }> = {
  en: { h: "h", min: "min", s: "s" },
  nb: { h: "t", min: "min", s: "s" },
};

const EMPTY = "—";
const isNumber = (value: number | null | undefined): value is number => value !== null && value !== undefined && Number.isFinite(value);

export type Formatter = ReturnType<typeof createFormatter>;

/**
 * Every format for one locale and zone. `timeZone` must be a valid IANA zone (lib/i18n/locales.ts
 * `isTimeZone` checks what comes from a request).
 */
export function createFormatter(locale: Locale, timeZone: string) {
  const tag = LOCALES[locale].tag;
  /** This formatter's own handle on a cached Intl formatter: looked up once, not per value formatted (a key per call costs a JSON.stringify). */
  const inZone = (options: Intl.DateTimeFormatOptions) => {
    let made: Intl.DateTimeFormat | undefined;
    return () => (made ??= dateTimeFormat(tag, { ...options, timeZone }));
  };
  const zoneNames = inZone({ timeZoneName: "short" });
  const dateTimes = inZone({ dateStyle: "medium", timeStyle: "short" });
  const times = inZone({ timeStyle: "short" });
  const dates = inZone({ dateStyle: "medium" });
  const numbers = (options: Intl.NumberFormatOptions) => {
    let made: Intl.NumberFormat | undefined;
    return () => (made ??= numberFormat(tag, options));
  };
  const integers = numbers({});
  const oneDecimal = numbers({ maximumFractionDigits: 1 });
  const noDecimal = numbers({ maximumFractionDigits: 0 });
  const fourDecimals = numbers({ maximumFractionDigits: 4 });

  /** The zone's short name at that instant, in the locale: "CET" in January, "CEST" in July, "UTC". */
  function zoneName(value: Date): string {
    return zoneNames().formatToParts(value).find((part) => part.type === "timeZoneName")?.value ?? timeZone;
  }

  /** A calendar day "YYYY-MM-DD" (a bucket, not an instant): formatted as that day, whatever the zone. */
  function calendarDay(day: string, options: Intl.DateTimeFormatOptions): string {
    const date = new Date(`${day}T00:00:00Z`);
    return Number.isNaN(date.getTime()) ? day : dateTimeFormat(tag, { ...options, timeZone: "UTC" }).format(date);
  }

  return {
    locale,
    tag,
    timeZone,
    zoneName,
    /** "30 Mar 2025, 14:05 CEST" / "30. mars 2025, 14:05 CEST". */
    dateTime(value: Date | null | undefined): string {
      return value ? `${dateTimes().format(value)} ${zoneName(value)}` : EMPTY;
    },
    /** The time of day with its zone, "05:13 UTC": beside `date` where a narrow column splits the two. */
    time(value: Date | null | undefined): string {
      return value ? `${times().format(value)} ${zoneName(value)}` : EMPTY;
    },
    /** The day of an instant, in the zone: "30 Mar 2025". */
    date(value: Date | null | undefined): string {
      return value ? dates().format(value) : EMPTY;
    },
    /** A day bucket "YYYY-MM-DD" as a date: "30 Mar 2025". */
    day(day: string): string {
      return calendarDay(day, { dateStyle: "medium" });
    },
    /** A day bucket on a chart's axis: "30 Mar" / "30. mars". */
    shortDay(day: string): string {
      return calendarDay(day, { day: "numeric", month: "short" });
    },
    /** An amount in its currency (ISO 4217), with the currency's own decimals when the record gives them. */
    money(amount: number | null | undefined, currency: string | null | undefined, decimals?: number | null): string {
      if (!isNumber(amount)) return EMPTY;
      const digits = decimals ?? undefined;
      if (!currency) return numberFormat(tag, { minimumFractionDigits: digits ?? 2, maximumFractionDigits: digits ?? 2 }).format(amount);
      try {
        return numberFormat(tag, { style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(amount);
      } catch {
        // A code Intl does not know (the service's list is not shown): the number and the code as given.
        return `${numberFormat(tag, { minimumFractionDigits: digits ?? 2, maximumFractionDigits: digits ?? 2 }).format(amount)} ${currency}`;
      }
    },
    /** "12.5 kWh"; no decimal from 100 up. */
    kwh(value: number | null | undefined): string {
      return isNumber(value) ? `${(value >= 100 ? noDecimal : oneDecimal)().format(value)} kWh` : EMPTY;
    },
    /** "22 kW", "7,4 kW". */
    kw(value: number | null | undefined): string {
      return isNumber(value) ? `${oneDecimal().format(value)} kW` : EMPTY;
    },
    /** A figure on a chart: at most one decimal. */
    number(value: number): string {
      return oneDecimal().format(value);
    },
    /** A stored number as it is, up to 4 decimals (a DECIMAL(19,4) column): "1,234.5" / "1 234,5"; — for none. */
    decimal(value: number | null | undefined): string {
      return isNumber(value) ? fourDecimals().format(value) : EMPTY;
    },
    /** A count: "1,234" / "1 234". */
    count(value: number): string {
      return integers().format(value);
    },
    /** "1 h 25 min", "12 min", "40 s" ("1 t 25 min" in Norwegian). */
    duration(ms: number | null | undefined): string {
      if (!isNumber(ms) || ms < 0) return EMPTY;
      const unit = DURATION_UNITS[locale];
      const minutes = Math.round(ms / 60_000);
      if (minutes < 1) return `${Math.round(ms / 1000)} ${unit.s}`;
      const hours = Math.floor(minutes / 60);
      return hours > 0 ? `${hours} ${unit.h} ${minutes % 60} ${unit.min}` : `${minutes} ${unit.min}`;
    },
  };
}

const formatters = new Map<string, Formatter>();

/** The formatter for a locale and zone, made once and reused (the Intl formatters inside are cached too). */
export function formatterFor(locale: Locale, timeZone: string): Formatter {
  const key = `${locale}|${timeZone}`;
  let made = formatters.get(key);
  if (!made) {
    if (formatters.size >= MAX_CACHED) formatters.clear();
    made = createFormatter(locale, timeZone);
    formatters.set(key, made);
  }
  return made;
}
