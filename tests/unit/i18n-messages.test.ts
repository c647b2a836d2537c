// The message catalogue (messages/*.json, lib/i18n/messages.ts): every shipped language has exactly
// English's keys, with the same placeholders, so a page never shows a key or loses a figure; and a
// dashboard section's own catalogue, when it has one, follows the same rule.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
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

  // A dashboard section's own catalogue (app/dashboard/<section>/_messages/<locale>.json, read beside
  // the core one): found by looking, so this test names no section and deleting one leaves it green.
  const sectionCatalogues = readdirSync("app/dashboard", { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join("app/dashboard", entry.name, "_messages")))
    .map((entry) => path.join("app/dashboard", entry.name, "_messages"));

  it("finds every section's own catalogue: each folder that imports one has it where this test looks", () => {
    const importing = readdirSync("app/dashboard", { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .filter((entry) =>
        readdirSync(path.join("app/dashboard", entry.name))
          .filter((name) => /\.tsx?$/.test(name))
          .some((name) => readFileSync(path.join("app/dashboard", entry.name, name), "utf8").includes("./_messages/")),
      )
      .map((entry) => path.join("app/dashboard", entry.name, "_messages"));
    expect(sectionCatalogues.sort()).toEqual(importing.sort());
  });

  it("a section's translator reads its own catalogue in the language, and the core one through it", () => {
    const section = { en: { "example.hello": "Hello {name}" }, nb: { "example.hello": "Hei {name}" } };
    const nb = createTranslator<"example.hello" | "nav.overview">("nb", section);
    expect(nb("example.hello", { name: "Kari" })).toBe("Hei Kari");
    expect(nb("nav.overview")).toBe(CATALOGUES.nb["nav.overview"]);
  });

  for (const folder of sectionCatalogues) {
    it(`${folder}: one file per language listed, each with English's keys and placeholders, and none of the core catalogue's`, () => {
      const files = readdirSync(folder).filter((name) => name.endsWith(".json")).map((name) => name.replace(/\.json$/, "")).sort();
      expect(files).toEqual(Object.keys(LOCALES).sort());
      const read = (locale: string) => JSON.parse(readFileSync(path.join(folder, `${locale}.json`), "utf8")) as Record<string, string>;
      const en = read("en");
      // A section's key that is also a core key would hide the core one on its pages.
      expect(Object.keys(en).filter((key) => key in CATALOGUES.en), "keys the core catalogue has").toEqual([]);
      for (const locale of files) {
        const other = read(locale);
        expect(Object.keys(other).filter((key) => !(key in en)), `${locale}: keys English does not have`).toEqual([]);
        expect(Object.keys(en).filter((key) => !(key in other)), `${locale}: keys missing`).toEqual([]);
        for (const key of Object.keys(en)) {
          expect(typeof other[key], `${locale} ${key}`).toBe("string");
          expect(other[key]!.trim(), `${locale} ${key}`).not.toBe("");
          expect(placeholders(other[key]!), `${locale} ${key}`).toEqual(placeholders(en[key]!));
        }
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
