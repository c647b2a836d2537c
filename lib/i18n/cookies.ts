// The cookies that carry the operator's choice of language and zone (lib/i18n/settings.ts says why a
// cookie): names and lifetime only, so a client component (app/dashboard/_components/i18n.tsx, which
// writes the browser's zone) can import them without the form's zod schemas. zod checks whether it may
// compile with `new Function` when first used, and the browser reports that as a violation of the
// app's Content-Security-Policy (no 'unsafe-eval': lib/http/security-headers.ts).
export const LOCALE_COOKIE = "dashboard-locale";
export const ZONE_COOKIE = "dashboard-zone";
/** The zone the browser reports (`Intl.DateTimeFormat().resolvedOptions().timeZone`), sent once by a tiny script. */
export const BROWSER_ZONE_COOKIE = "browser-zone";
/** A year: a choice is kept until changed. */
export const DISPLAY_COOKIE_MAX_AGE = 365 * 24 * 60 * 60;
