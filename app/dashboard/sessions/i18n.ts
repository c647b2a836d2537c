// The Sessions section's own sentences, in every shipped language (./_messages/<locale>.json), read
// beside the core catalogue (lib/i18n/messages.ts): deleting the section (its folder and its line in
// ../sections.ts) leaves no key behind. tests/unit/i18n-messages.test.ts checks every language.
import type { Locale } from "@/lib/i18n/locales";
import { sectionTranslators } from "@/lib/i18n/messages";
import en from "./_messages/en.json" with { type: "json" };
import nb from "./_messages/nb.json" with { type: "json" };

/** One line per shipped language: a fork that adds one to lib/i18n/locales.ts fails to compile here until it is translated. */
const CATALOGUE: Record<Locale, Record<string, string>> = { en, nb };

export type SessionsMessageKey = keyof typeof en;

/** The Sessions section's translator for a locale (its keys, then the core catalogue's), made once. */
export const sessionsTranslator = sectionTranslators<SessionsMessageKey>(CATALOGUE);
export type SessionsTranslator = ReturnType<typeof sessionsTranslator>;
