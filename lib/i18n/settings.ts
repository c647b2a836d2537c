// The operator's own choice of language and time zone ("Settings and access", /dashboard/settings),
// checked as the form posts it; the cookies that carry it are named in ./cookies (zod stays out of the
// browser's bundle: its check for eval is a violation under the app's CSP).
//
// Stored in a cookie, not with the install (docs/spec-gaps.md A152): a language is a person's, and one
// install is used by everyone who works for its operator (contract §2: one install per operator), so a
// Swedish and a Norwegian colleague each keep theirs. The cookie holds no secret, only a locale and a
// zone; the server checks both every time it reads them (lib/i18n/locales.ts).
import { z } from "zod";
import { isLocale, isTimeZone, type Locale } from "./locales";

export { BROWSER_ZONE_COOKIE, DISPLAY_COOKIE_MAX_AGE, LOCALE_COOKIE, ZONE_COOKIE } from "./cookies";

/** "auto": no choice, the dashboard follows the install's country, then the browser (A151). */
export const AUTOMATIC = "auto";

/**
 * The settings form, as posted: a shipped locale or "auto", a valid IANA zone or "auto". Anything
 * else is refused with a reason the page shows, never a 500 (a form is a stranger's input).
 */
export const DisplaySettingsSchema = z.object({
  locale: z.union([z.literal(AUTOMATIC), z.string().refine(isLocale)]).transform((v) => (v === AUTOMATIC ? null : (v as Locale))),
  timeZone: z.union([z.literal(AUTOMATIC), z.string().refine(isTimeZone)]).transform((v) => (v === AUTOMATIC ? null : v)),
});

export type DisplaySettings = z.output<typeof DisplaySettingsSchema>;

/**
 * `acceptZone`: the server's further check (lib/i18n/database-zones.ts): a real zone that the database
 * reads otherwise is refused too, as `unsupportedZone`, so the page can say why.
 */
export function parseDisplaySettings(
  form: { get(name: string): unknown },
  acceptZone: (zone: string) => boolean = () => true,
): { ok: true; settings: DisplaySettings } | { ok: false; field: "locale" | "timeZone" | "unsupportedZone" } {
  const parsed = DisplaySettingsSchema.safeParse({ locale: form.get("locale"), timeZone: form.get("timeZone") });
  if (!parsed.success) return { ok: false, field: parsed.error.issues[0]?.path[0] === "timeZone" ? "timeZone" : "locale" };
  if (parsed.data.timeZone !== null && !acceptZone(parsed.data.timeZone)) return { ok: false, field: "unsupportedZone" };
  return { ok: true, settings: parsed.data };
}

/** The zones Intl knows: UTC first, then by name. The form offers those the database reads alike too. */
export function selectableTimeZones(): string[] {
  return ["UTC", ...Intl.supportedValuesOf("timeZone").filter((zone) => zone !== "UTC")];
}
