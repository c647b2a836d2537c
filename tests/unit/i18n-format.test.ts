// The formatter module (lib/i18n/format.ts) and the order the dashboard picks its language and zone
// in (lib/i18n/locales.ts `resolveDisplay`, docs/spec-gaps.md A151): Norwegian amounts and dates,
// Oslo time named CET or CEST across the change to summer time, formatters built once and reused,
// and every fallback step, with what a stranger can send refused.
import { describe, expect, it } from "vitest";
import { cachedFormatterCount, createFormatter, formatterFor } from "@/lib/i18n/format";
import { isTimeZone, localeFromAcceptLanguage, resolveDisplay, zoneLabel } from "@/lib/i18n/locales";
import { parseDisplaySettings } from "@/lib/i18n/settings";

// Intl writes a no-break space (U+00A0) between digit groups and before "kr" in Norwegian; compare with plain spaces.
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, " ");

describe("the formatter module", () => {
  const oslo = createFormatter("nb", "Europe/Oslo");

  it("writes a Norwegian operator's money, counts and energy the Norwegian way", () => {
    expect(plain(oslo.money(1234.5, "NOK", 2))).toBe("1 234,50 kr");
    expect(plain(oslo.money(1234.5, "EUR", 2))).toBe("1 234,50 €");
    expect(plain(oslo.count(20000))).toBe("20 000");
    expect(plain(oslo.kwh(12.25))).toBe("12,3 kWh");
    expect(plain(oslo.kw(7.4))).toBe("7,4 kW");
    // A generated resource's numeric column (npm run new:resource --field x:decimal): as stored, to 4 decimals.
    expect(plain(oslo.decimal(1234.5678))).toBe("1 234,5678");
    expect(oslo.decimal(null)).toBe("—");
    expect(oslo.duration(85 * 60_000)).toBe("1 t 25 min");
    // A currency code Intl does not know: the number in the locale's digits and the code as given.
    expect(plain(oslo.money(5, "XQQ1", 2))).toBe("5,00 XQQ1");
  });

  it("keeps English exactly as the dashboard wrote it before languages existed", () => {
    const en = createFormatter("en", "UTC");
    expect(en.money(1234.5, "EUR", 2)).toBe("€1,234.50");
    expect(en.dateTime(new Date("2025-03-30T05:13:00Z"))).toBe("30 Mar 2025, 05:13 UTC");
    expect(en.time(new Date("2025-03-30T05:13:00Z"))).toBe("05:13 UTC");
    expect(en.duration(85 * 60_000)).toBe("1 h 25 min");
    expect(en.day("2025-02-01")).toBe("1 Feb 2025");
  });

  it("shows Oslo time with its zone, CET before the change to summer time and CEST after it", () => {
    // Summer time began in Oslo on 30 March 2025 at 01:00 UTC (02:00 → 03:00 local).
    expect(oslo.dateTime(new Date("2025-03-30T00:30:00Z"))).toBe("30. mars 2025, 01:30 CET");
    expect(oslo.dateTime(new Date("2025-03-30T01:30:00Z"))).toBe("30. mars 2025, 03:30 CEST");
    expect(oslo.time(new Date("2025-01-06T08:00:00Z"))).toBe("09:00 CET");
    // The day of an instant is Oslo's day: 23:30 UTC on the 5th is already the 6th in Oslo.
    expect(oslo.date(new Date("2025-01-05T23:30:00Z"))).toBe("6. jan. 2025");
    expect(createFormatter("en", "Europe/Oslo").time(new Date("2025-07-01T12:00:00Z"))).toBe("14:00 CEST");
  });

  it("labels a day bucket as that calendar day, whatever the zone", () => {
    expect(oslo.day("2025-03-30")).toBe("30. mars 2025");
    expect(oslo.shortDay("2025-03-30")).toBe("30. mars");
    expect(createFormatter("en", "Pacific/Kiritimati").shortDay("2025-03-30")).toBe("30 Mar");
  });

  it("builds each Intl formatter once per locale, zone and options, and reuses it", () => {
    const f = formatterFor("nb", "Europe/Oslo");
    expect(formatterFor("nb", "Europe/Oslo")).toBe(f);
    f.money(1, "NOK", 2);
    f.dateTime(new Date());
    f.kw(22);
    f.count(1);
    const built = cachedFormatterCount();
    for (let i = 0; i < 200; i++) {
      f.money(i, "NOK", 2);
      f.dateTime(new Date(i * 86_400_000));
      f.kw(i);
      f.count(i);
    }
    // 800 formats, not one formatter more.
    expect(cachedFormatterCount()).toBe(built);
  });
});

describe("the order the dashboard picks its language and zone in", () => {
  it("takes the operator's own choice first", () => {
    expect(resolveDisplay({ chosenLocale: "en", chosenZone: "America/New_York", countries: ["NO"], acceptLanguage: "nb", browserZone: "Europe/Oslo" })).toEqual({
      locale: "en",
      timeZone: "America/New_York",
      localeFrom: "choice",
      zoneFrom: "choice",
    });
  });

  it("else the country of every one of the install's charge points, when it is one listed country", () => {
    expect(resolveDisplay({ countries: ["NO", "no", null], acceptLanguage: "en-US", browserZone: "UTC" })).toEqual({
      locale: "nb",
      timeZone: "Europe/Oslo",
      localeFrom: "country",
      zoneFrom: "country",
    });
    // Two countries, or one the list does not hold: the charge points say nothing certain.
    expect(resolveDisplay({ countries: ["NO", "SE"] }).localeFrom).toBe("default");
    expect(resolveDisplay({ countries: ["NL"] }).zoneFrom).toBe("default");
  });

  it("else the browser: its preferred shipped language and the zone its script reported", () => {
    expect(resolveDisplay({ countries: ["NL"], acceptLanguage: "de-DE,nb;q=0.8,en;q=0.5", browserZone: "Europe/Amsterdam" })).toEqual({
      locale: "nb",
      timeZone: "Europe/Amsterdam",
      localeFrom: "browser",
      zoneFrom: "browser",
    });
    expect(localeFromAcceptLanguage("no-NO")).toBe("nb");
    expect(localeFromAcceptLanguage("en;q=0.2, nb;q=0.9")).toBe("nb");
    expect(localeFromAcceptLanguage("sv-SE,de")).toBeNull();
  });

  it("else English and UTC; a bad choice or zone from a cookie is skipped, never thrown", () => {
    expect(resolveDisplay({})).toEqual({ locale: "en", timeZone: "UTC", localeFrom: "default", zoneFrom: "default" });
    expect(resolveDisplay({ chosenLocale: "xx", chosenZone: "Mars/Olympus", browserZone: "'; DROP TABLE", acceptLanguage: ";;;q=abc,,," })).toEqual({
      locale: "en",
      timeZone: "UTC",
      localeFrom: "default",
      zoneFrom: "default",
    });
  });

  it("accepts only real IANA zones", () => {
    expect(isTimeZone("Europe/Oslo")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    for (const bad of ["Mars/Olympus", "", "Europe/Oslo\n", "../etc/passwd", "x".repeat(100), 42, null]) expect(isTimeZone(bad), String(bad)).toBe(false);
  });

  it("names a zone by its city, and a zone without one by the platform's short name, with the sign the right way round", () => {
    const en = (city: string) => `${city} time`;
    const nb = (city: string) => `${city}-tid`;
    expect(zoneLabel("Europe/Oslo", "nb", nb)).toBe("Oslo-tid");
    expect(zoneLabel("America/Argentina/Buenos_Aires", "en", en)).toBe("Buenos Aires time");
    for (const zone of ["UTC", "Etc/UTC", "GMT", "Zulu"]) expect(zoneLabel(zone, "en", en), zone).toBe("UTC");
    // Etc/GMT-2 is two hours ahead of UTC (POSIX signs): never "GMT-2 time".
    expect(zoneLabel("Etc/GMT-2", "en", en)).toBe("GMT+2");
    expect(zoneLabel("Etc/GMT+5", "nb", nb)).toBe("GMT-5");
  });
});

describe("the settings form's input", () => {
  const form = (values: Record<string, unknown>) => ({ get: (name: string) => values[name] ?? null });

  it("takes a shipped language and a real zone, or Automatic for either", () => {
    expect(parseDisplaySettings(form({ locale: "nb", timeZone: "Europe/Oslo" }))).toEqual({ ok: true, settings: { locale: "nb", timeZone: "Europe/Oslo" } });
    expect(parseDisplaySettings(form({ locale: "auto", timeZone: "auto" }))).toEqual({ ok: true, settings: { locale: null, timeZone: null } });
  });

  it("refuses a language the app does not ship, a zone that does not exist, and a missing field", () => {
    expect(parseDisplaySettings(form({ locale: "sv", timeZone: "auto" }))).toEqual({ ok: false, field: "locale" });
    expect(parseDisplaySettings(form({ locale: "auto", timeZone: "Europe/Atlantis" }))).toEqual({ ok: false, field: "timeZone" });
    expect(parseDisplaySettings(form({ timeZone: "UTC" }))).toEqual({ ok: false, field: "locale" });
  });

  it("refuses a real zone the server does not accept (the database reads it otherwise), saying so apart", () => {
    const accept = (zone: string) => zone !== "CET";
    expect(parseDisplaySettings(form({ locale: "auto", timeZone: "CET" }), accept)).toEqual({ ok: false, field: "unsupportedZone" });
    expect(parseDisplaySettings(form({ locale: "auto", timeZone: "Europe/Brussels" }), accept)).toEqual({ ok: true, settings: { locale: null, timeZone: "Europe/Brussels" } });
    expect(parseDisplaySettings(form({ locale: "auto", timeZone: "auto" }), () => false)).toEqual({ ok: true, settings: { locale: null, timeZone: null } });
  });
});

describe("a zone the server does not accept, already stored", () => {
  it("counts as none: the next in the order is used (country, browser, UTC)", () => {
    const acceptZone = (zone: string) => zone !== "CET";
    expect(resolveDisplay({ chosenZone: "CET", browserZone: "Europe/Brussels", acceptZone })).toMatchObject({ timeZone: "Europe/Brussels", zoneFrom: "browser" });
    expect(resolveDisplay({ chosenZone: "CET", countries: ["NO"], acceptZone })).toMatchObject({ timeZone: "Europe/Oslo", zoneFrom: "country" });
    expect(resolveDisplay({ chosenZone: "CET", browserZone: "CET", acceptZone })).toMatchObject({ timeZone: "UTC", zoneFrom: "default" });
  });
});

describe("no formatter built per call (issue 34: 16-25 ms of app CPU per page, against 6-8 ms before)", () => {
  it("a request's worth of checks, zone names, plurals and formats, many times over, builds no Intl object after the first", async () => {
    const { translator } = await import("@/lib/i18n/messages");
    // Counts every Intl formatter constructed, by standing in for the three constructors.
    const built = { count: 0 };
    const originals = { DateTimeFormat: Intl.DateTimeFormat, NumberFormat: Intl.NumberFormat, PluralRules: Intl.PluralRules };
    for (const name of Object.keys(originals) as (keyof typeof originals)[]) {
      const original = originals[name];
      Object.assign(Intl, {
        [name]: new Proxy(original, {
          construct(target, args) {
            built.count += 1;
            return Reflect.construct(target, args) as object;
          },
        }),
      });
    }
    const request = () => {
      const display = resolveDisplay({ chosenLocale: "nb", chosenZone: "Europe/Oslo", browserZone: "Europe/Paris" });
      const t = translator(display.locale);
      const f = formatterFor(display.locale, display.timeZone);
      zoneLabel("UTC", "nb", (city) => city);
      zoneLabel(display.timeZone, display.locale, (city) => t("zone.cityTime", { city }));
      for (let row = 0; row < 25; row++) {
        t.plural("overview.sessions", row);
        f.dateTime(new Date(Date.UTC(2025, 2, row + 1, 12)));
        f.time(new Date(Date.UTC(2025, 2, row + 1, 12)));
        f.money(row * 10.5, "NOK", 2);
        f.kwh(row * 3.3);
        f.count(row * 1000);
      }
    };
    try {
      request();
      const afterFirst = built.count;
      for (let n = 0; n < 50; n++) request();
      expect(built.count - afterFirst).toBe(0);
    } finally {
      Object.assign(Intl, originals);
    }
  });
});
