// The Teams section's own sentences, in every shipped language (./_messages/<locale>.json), read
// beside the core catalogue (lib/i18n/messages.ts, createTranslator): the section's pages use both.
// They live in this folder so that deleting the section (its folder and its line in ../sections.ts)
// leaves no key behind; tests/unit/i18n-messages.test.ts checks every language has English's keys.
// Not server-only: the rename form, a client component, words itself with it too.
import type { Locale } from "@/lib/i18n/locales";
import { sectionTranslators, type MessageKey } from "@/lib/i18n/messages";
import en from "./_messages/en.json" with { type: "json" };
import nb from "./_messages/nb.json" with { type: "json" };

/** One line per shipped language: a fork that adds one to lib/i18n/locales.ts fails to compile here until it is translated. */
const CATALOGUE: Record<Locale, Record<string, string>> = { en, nb };

export type TeamsMessageKey = keyof typeof en | MessageKey;

/** The Teams section's translator for a locale (its keys, then the core catalogue's), made once. */
export const teamsTranslator = sectionTranslators<keyof typeof en>(CATALOGUE);
export type TeamsTranslator = ReturnType<typeof teamsTranslator>;
