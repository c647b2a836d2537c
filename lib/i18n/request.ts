// The language, zone, formatter and words of the request being rendered: what every dashboard page
// and component formats with. Read once per request (React `cache`), from the operator's cookies, the
// install's charge points and the browser's headers, in the order lib/i18n/locales.ts
// (`resolveDisplay`) gives (docs/spec-gaps.md A151).
import "server-only";
import { cookies, headers } from "next/headers";
import { cache } from "react";
import { currentOperator } from "@/lib/auth/operator-session";
import { db } from "@/lib/db/client";
import { acceptedTimeZones } from "./database-zones";
import { formatterFor, type Formatter } from "./format";
import { COUNTRY_DEFAULTS, resolveDisplay, zoneLabel, type Display } from "./locales";
import { translator, type Translator } from "./messages";
import { BROWSER_ZONE_COOKIE, LOCALE_COOKIE, ZONE_COOKIE } from "./settings";

export type DashboardI18n = Display & { f: Formatter; t: Translator; /** "UTC", "Oslo time", "Oslo-tid". */ zoneLabel: string };

/**
 * The countries of the install's charge points in the local copy (public-facts.md `address.country`):
 * two at most, since only "all in one country" means anything. An index-prefix read of one install's rows.
 */
async function installCountries(installRowId: string): Promise<string[]> {
  const rows = await db().$queryRaw<{ country: string }[]>`
    SELECT DISTINCT upper(country) AS country FROM synced_charge_points
    WHERE install_row_id = ${installRowId}::uuid AND deleted_at IS NULL AND country IS NOT NULL
    LIMIT 2`;
  return rows.map((row) => row.country);
}

/** A cookie's value as the browser wrote it ("Europe%2FOslo"); a malformed one is ignored, never thrown. */
function decoded(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

export const dashboardI18n = cache(async (): Promise<DashboardI18n> => {
  const [jar, head, operator] = await Promise.all([cookies(), headers(), currentOperator()]);
  const chosenZone = decoded(jar.get(ZONE_COOKIE)?.value);
  const browserZone = decoded(jar.get(BROWSER_ZONE_COOKIE)?.value);
  // A stored zone the database reads otherwise (a choice made before it was refused, a browser's) counts as none.
  const [countries, accepted] = await Promise.all([
    operator ? installCountries(operator.installRowId) : [],
    acceptedTimeZones([chosenZone, browserZone, ...Object.values(COUNTRY_DEFAULTS).map((country) => country.timeZone)]),
  ]);
  const display = resolveDisplay({
    chosenLocale: jar.get(LOCALE_COOKIE)?.value,
    chosenZone,
    countries,
    acceptLanguage: head.get("accept-language"),
    browserZone,
    acceptZone: (zone) => accepted.has(zone),
  });
  const t = translator(display.locale);
  return {
    ...display,
    f: formatterFor(display.locale, display.timeZone),
    t,
    zoneLabel: zoneLabel(display.timeZone, display.locale, (city) => t("zone.cityTime", { city })),
  };
});
