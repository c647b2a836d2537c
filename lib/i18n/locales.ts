// The languages the dashboard ships, and what an install's country implies. Not server-only: the
// client components (charts, the browser's zone) format with the same list.
//
// A new language is one entry here and one file in messages/ (docs/adding-a-feature.md, "A new
// language"); tests/unit/i18n-messages.test.ts checks that the file has every key English has.

export const LOCALES = {
  /** English, as every page read before languages existed: en-GB dates ("30 Mar 2025"), 24-hour times. */
  en: { tag: "en-GB", name: "English" },
  /** Norwegian (bokmål): "30. mars 2025", "1 234,50 kr". */
  nb: { tag: "nb-NO", name: "Norsk (bokmål)" },
} as const;

export type Locale = keyof typeof LOCALES;

export const DEFAULT_LOCALE: Locale = "en";
/** The contract gives no operator zone (docs/spec-gaps.md A151): UTC unless something better is known. */
export const DEFAULT_TIME_ZONE = "UTC";

export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && Object.hasOwn(LOCALES, value);
}

/**
 * What a charge point's country (public-facts.md "Records": `address.country`) says about its
 * operator, for the countries whose language the dashboard ships and whose whole territory keeps one
 * time zone. A country with several zones is never listed: its charge points say nothing certain.
 * docs/spec-gaps.md A151: a fork adds a row with its language (SE → sv, Europe/Stockholm).
 */
export const COUNTRY_DEFAULTS: Readonly<Record<string, { locale: Locale; timeZone: string }>> = {
  NO: { locale: "nb", timeZone: "Europe/Oslo" },
};

/**
 * What Intl said of each zone asked about, and each zone's short name per locale: building an Intl
 * formatter is the dear part (it loads the zone's and locale's data), and every request asks. Bounded,
 * since zones come from requests: cleared when full, like ./format.ts's formatters.
 */
const zoneChecks = new Map<string, boolean>();
const zoneShortNames = new Map<string, string>();
const MAX_ZONES = 500;
function remember<V>(map: Map<string, V>, key: string, value: V): V {
  if (map.size >= MAX_ZONES) map.clear();
  map.set(key, value);
  return value;
}

/**
 * A real IANA zone, as Intl knows it ("Europe/Oslo", "UTC"). Anything else is refused: a zone comes
 * from a cookie or a form, so from a stranger, and an unknown one would make Intl throw mid-page.
 */
export function isTimeZone(value: unknown): value is string {
  if (typeof value !== "string" || value.length === 0 || value.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(value)) return false;
  const known = zoneChecks.get(value);
  if (known !== undefined) return known;
  try {
    new Intl.DateTimeFormat("en", { timeZone: value });
    return remember(zoneChecks, value, true);
  } catch {
    return remember(zoneChecks, value, false);
  }
}

/**
 * How a page names its zone beside a range or a time ("Oslo time", "Oslo-tid", "UTC"). A zone with a
 * city takes its city through the catalogue's `zone.cityTime`. A zone without one ("UTC", "Etc/UTC",
 * "GMT", "Etc/GMT-2") takes the platform's own short name instead: "Etc/UTC time" says nothing, and
 * "GMT-2 time" would read the POSIX sign backwards (Etc/GMT-2 is two hours *ahead* of UTC: "GMT+2").
 */
export function zoneLabel(timeZone: string, locale: Locale, cityTime: (city: string) => string): string {
  if (!timeZone.includes("/") || timeZone.startsWith("Etc/")) {
    const key = `${locale}|${timeZone}`;
    const known = zoneShortNames.get(key);
    if (known !== undefined) return known;
    const parts = new Intl.DateTimeFormat(LOCALES[locale].tag, { timeZone, timeZoneName: "short" }).formatToParts(0);
    return remember(zoneShortNames, key, parts.find((part) => part.type === "timeZoneName")?.value ?? timeZone);
  }
  return cityTime(timeZone.split("/").at(-1)!.replaceAll("_", " "));
}

/**
 * The shipped language an Accept-Language header prefers most ("nb-NO,nb;q=0.9,en;q=0.8" → nb),
 * by its q-values; "no" (Norwegian) counts as bokmål. Null when none of them is shipped.
 */
export function localeFromAcceptLanguage(header: string | null | undefined): Locale | null {
  if (!header) return null;
  const ranked = header
    .slice(0, 500)
    .split(",")
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { base: tag.trim().toLowerCase().split("-")[0] ?? "", q: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.base && Number.isFinite(entry.q) && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { base } of ranked) {
    const locale = base === "no" || base === "nn" ? "nb" : base;
    if (isLocale(locale)) return locale;
  }
  return null;
}

export type DisplaySource = "choice" | "country" | "browser" | "default";

export type Display = { locale: Locale; timeZone: string; localeFrom: DisplaySource; zoneFrom: DisplaySource };

/**
 * The order the dashboard picks its language and zone in (docs/spec-gaps.md A151): the operator's
 * own choice on "Settings and access"; else the country of every one of the install's charge points,
 * when they are all in one listed country; else the browser (Accept-Language; the zone its script
 * reported); else English and UTC. Each input is checked here, since all of them come from the request.
 */
export function resolveDisplay(input: {
  chosenLocale?: string | null;
  chosenZone?: string | null;
  countries?: readonly (string | null)[];
  acceptLanguage?: string | null;
  browserZone?: string | null;
  /** Which zones the server may use (lib/i18n/database-zones.ts): a zone it refuses counts as none. */
  acceptZone?: (zone: string) => boolean;
}): Display {
  const usable = (zone: string | null | undefined): zone is string => isTimeZone(zone) && (input.acceptZone?.(zone) ?? true);
  const countries = new Set((input.countries ?? []).filter((c): c is string => !!c).map((c) => c.trim().toUpperCase()));
  const country = countries.size === 1 ? COUNTRY_DEFAULTS[[...countries][0]!] : undefined;

  let locale: Locale = DEFAULT_LOCALE;
  let localeFrom: DisplaySource = "default";
  const browserLocale = localeFromAcceptLanguage(input.acceptLanguage);
  if (isLocale(input.chosenLocale)) [locale, localeFrom] = [input.chosenLocale, "choice"];
  else if (country) [locale, localeFrom] = [country.locale, "country"];
  else if (browserLocale) [locale, localeFrom] = [browserLocale, "browser"];

  let timeZone = DEFAULT_TIME_ZONE;
  let zoneFrom: DisplaySource = "default";
  if (usable(input.chosenZone)) [timeZone, zoneFrom] = [input.chosenZone, "choice"];
  else if (country && usable(country.timeZone)) [timeZone, zoneFrom] = [country.timeZone, "country"];
  else if (usable(input.browserZone)) [timeZone, zoneFrom] = [input.browserZone, "browser"];

  return { locale, timeZone, localeFrom, zoneFrom };
}
