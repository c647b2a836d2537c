// The dashboard's message catalogue: every sentence the operator reads, by key, in each shipped
// language (messages/<locale>.json). English is the reference: its keys are the type, and
// tests/unit/i18n-messages.test.ts fails when another language lacks one or has one English does not.
// Not server-only: the dashboard's client components take their words from here too.
//
// The format is plain JSON with `{name}` placeholders, the shape next-intl and most translation tools
// read, so a fork can move to a library without rewriting its catalogue (docs/spec-gaps.md A150).
// A count takes a plural form: `key.one` and `key.other` (and whatever Intl.PluralRules names for
// the language), picked by `plural()`.
import en from "@/messages/en.json" with { type: "json" };
import nb from "@/messages/nb.json" with { type: "json" };
import { numberFormat, pluralRules } from "./format";
import { LOCALES, type Locale } from "./locales";

export type Catalogue = Record<string, string>;

/** The core catalogues, one per shipped locale. A new language is one more line (and its file). */
export const CATALOGUES: Record<Locale, Catalogue> = { en, nb };

export type MessageKey = keyof typeof en;
type PluralBase<K> = K extends `${infer Base}.other` ? Base : never;
export type PluralKey = PluralBase<MessageKey>;

export type Values = Record<string, string | number>;

/** `{name}` → its value; a placeholder without a value stays as written, so a gap shows instead of vanishing. */
export function interpolate(text: string, values?: Values): string {
  if (!values) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? String(values[name]) : whole));
}

/**
 * A translator over one or more catalogues (the core one, and an optional section's own, which it
 * keeps in its folder so removing the section leaves no key behind). A key missing in the language
 * falls back to English; a key missing everywhere shows as itself, which a test would catch.
 */
export function createTranslator<K extends string = MessageKey>(locale: Locale, ...catalogues: Record<Locale, Catalogue>[]) {
  // A section's own catalogues first, then the core one: its pages use both.
  const sources = [...catalogues, CATALOGUES];
  const lookup = (key: string): string | undefined => {
    for (const catalogue of sources) {
      const text = catalogue[locale][key] ?? catalogue.en[key];
      if (text !== undefined) return text;
    }
    return undefined;
  };
  const t = (key: K, values?: Values): string => interpolate(lookup(key) ?? key, values);
  /** The form for `count` (`key.one`, `key.other`, ...); `{count}` is the count, formatted for the language. */
  const plural = (key: K extends `${infer Base}.other` ? Base : never, count: number, values?: Values): string => {
    const form = pluralRules(LOCALES[locale].tag).select(count);
    const text = lookup(`${key}.${form}`) ?? lookup(`${key}.other`) ?? key;
    // The cached formatter (./format.ts): a plural is worded per row of a table, every request.
    return interpolate(text, { count: numberFormat(LOCALES[locale].tag).format(count), ...values });
  };
  return Object.assign(t, { plural, locale });
}

export type Translator = ReturnType<typeof createTranslator<MessageKey>>;

const translators = new Map<Locale, Translator>();

/** The core catalogue's translator for a locale, made once. */
export function translator(locale: Locale): Translator {
  let made = translators.get(locale);
  if (!made) {
    made = createTranslator<MessageKey>(locale);
    translators.set(locale, made);
  }
  return made;
}

/**
 * An optional section's translators (the i18n.ts in its folder): its own catalogue, one JSON per
 * shipped language in its folder, read before the core one; each locale's translator made once.
 * `Own` is the section's English keys.
 */
export function sectionTranslators<Own extends string>(catalogue: Record<Locale, Catalogue>) {
  type SectionTranslator = ReturnType<typeof createTranslator<Own | MessageKey>>;
  const made = new Map<Locale, SectionTranslator>();
  return (locale: Locale): SectionTranslator => {
    let t = made.get(locale);
    if (!t) {
      t = createTranslator<Own | MessageKey>(locale, catalogue);
      made.set(locale, t);
    }
    return t;
  };
}

/** What a component needs to word and format: the request's translator and formatter (lib/i18n/request.ts). */
export type Words = { t: Translator; f: import("./format").Formatter };
