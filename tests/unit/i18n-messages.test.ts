// The message catalogue (messages/*.json, lib/i18n/messages.ts): every shipped language has exactly
// English's keys, with the same placeholders, so a page never shows a key or loses a figure; and a
// dashboard section's own catalogue, when it has one, follows the same rule.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LOCALES } from "@/lib/i18n/locales";
import { CATALOGUES, createTranslator, interpolate } from "@/lib/i18n/messages";

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the message catalogue", () => {
  it("ships one file per language listed, and lists every file", () => {
    const files = readdirSync("messages").filter((name) => name.endsWith(".json")).map((name) => name.replace(/\.json$/, "")).sort();
    expect(files).toEqual(Object.keys(LOCALES).sort());
    expect(Object.keys(CATALOGUES).sort()).toEqual(files);
  });

  for (const locale of Object.keys(LOCALES) as (keyof typeof LOCALES)[]) {
    it(`${locale}: has every key English has, and no other, each with English's placeholders`, () => {
      const en = CATALOGUES.en;
      const other = JSON.parse(readFileSync(`messages/${locale}.json`, "utf8")) as Record<string, string>;
      expect(Object.keys(other).filter((key) => !(key in en)), "keys English does not have").toEqual([]);
      expect(Object.keys(en).filter((key) => !(key in other)), "keys missing").toEqual([]);
      for (const key of Object.keys(en)) {
        expect(typeof other[key], key).toBe("string");
        expect(other[key]!.trim(), key).not.toBe("");
        expect(placeholders(other[key]!), key).toEqual(placeholders(en[key]!));
      }
    });
  }

  it("fills placeholders, picks plural forms by the language's rules, and shows a gap rather than hiding it", () => {
    expect(interpolate("{a} and {b}", { a: 1 })).toBe("1 and {b}");
    const en = createTranslator("en");
    const nb = createTranslator("nb");
    expect(en.plural("overview.sessions", 1)).toBe("1 session");
    expect(en.plural("overview.sessions", 1234)).toBe("1,234 sessions");
    expect(nb.plural("overview.sessions", 1)).toBe("1 ladeøkt");
    expect(nb.plural("overview.sessions", 2).replace(/\u00a0/g, " ")).toBe("2 ladeøkter");
    expect(nb("overview.picker.days", { days: 30 })).toBe("30 dager");
  });
});
