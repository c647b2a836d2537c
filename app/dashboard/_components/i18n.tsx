"use client";
// The operator's language and zone for the dashboard's client components (the nav, the charts, the
// error boundaries): the layout resolves them on the server (lib/i18n/request.ts) and hands them down
// here, so a client component formats and words exactly as the server did, with the same catalogue
// and formatter module (lib/i18n). Only two short strings cross to the browser, not the catalogue's
// choice: both catalogues are in the bundle, which is small.
import { useRouter } from "next/navigation";
import { createContext, useContext, useEffect } from "react";
import { isSigningOut } from "@/app/components/sign-out-button";
import { formatterFor } from "@/lib/i18n/format";
import { DEFAULT_LOCALE, DEFAULT_TIME_ZONE, type DisplaySource, type Locale } from "@/lib/i18n/locales";
import { translator } from "@/lib/i18n/messages";
import { BROWSER_ZONE_COOKIE, DISPLAY_COOKIE_MAX_AGE } from "@/lib/i18n/cookies";

type Display = { locale: Locale; timeZone: string };

const DisplayContext = createContext<Display>({ locale: DEFAULT_LOCALE, timeZone: DEFAULT_TIME_ZONE });

export function DisplayProvider({ locale, timeZone, zoneFrom, children }: Display & { zoneFrom: DisplaySource; children: React.ReactNode }) {
  return (
    <DisplayContext.Provider value={{ locale, timeZone }}>
      <BrowserZone timeZone={timeZone} zoneFrom={zoneFrom} />
      {children}
    </DisplayContext.Provider>
  );
}

/** The words (`t`) and formats (`f`) of the page, in a client component. */
export function useI18n() {
  const { locale, timeZone } = useContext(DisplayContext);
  return { t: translator(locale), f: formatterFor(locale, timeZone), locale, timeZone };
}

/**
 * Tells the server the browser's time zone, once: a cookie it reads as the last guess before UTC
 * (docs/spec-gaps.md A151). When the page was drawn without a better source and the browser's zone
 * differs, the page is drawn again (router.refresh, in place) so its times are in that zone at once.
 */
/** The browser zone this document has already asked the server to draw the page in (BrowserZone). */
let refreshedForZone: string | undefined;

function BrowserZone({ timeZone, zoneFrom }: { timeZone: string; zoneFrom: DisplaySource }) {
  const router = useRouter();
  useEffect(() => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone) return;
    const current = document.cookie.split("; ").find((c) => c.startsWith(`${BROWSER_ZONE_COOKIE}=`))?.slice(BROWSER_ZONE_COOKIE.length + 1);
    if (current !== encodeURIComponent(zone)) {
      const secure = location.protocol === "https:" ? "; secure" : "";
      document.cookie = `${BROWSER_ZONE_COOKIE}=${encodeURIComponent(zone)}; path=/; max-age=${DISPLAY_COOKIE_MAX_AGE}; samesite=lax${secure}`;
    }
    // Decided by what this page was drawn with, not by whether the cookie was there: a page requested
    // while the previous page was still writing the cookie was drawn without it. Once per document
    // and zone, so a zone the server refuses cannot start a loop of refreshes.
    if ((zoneFrom === "default" || zoneFrom === "browser") && zone !== timeZone && refreshedForZone !== zone && !isSigningOut()) {
      refreshedForZone = zone;
      router.refresh();
    }
  }, [router, timeZone, zoneFrom]);
  return null;
}
