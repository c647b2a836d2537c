// What each scope lets the app do, in the operator's words: the one place the dashboard (and anything
// else shown to an operator) turns a scope string into a sentence. contract §2: scopes are
// `<resource>` or `<resource>:<permission>`, and a bare resource means read only. A scope not listed
// here is shown exactly as granted: the operator consented to that string, so it is never hidden.
//
// A synced resource's scopes are worded in its declaration (lib/sync/resources.ts); the scopes below
// belong to no synced resource. Those words are the English; the dashboard shows a scope in the
// operator's language from the catalogue (messages/<locale>.json `scope.<scope>`), and falls back to
// the declaration's English for a scope the catalogue does not word yet (a resource a fork just added).
import "server-only";
import { CATALOGUES, translator, type MessageKey, type Translator } from "@/lib/i18n/messages";
import { SYNCED_RESOURCES } from "@/lib/sync/resources";

const OTHER_SCOPE_WORDS: Readonly<Record<string, string>> = {
  // contract §4.3: the beta EVSE charge history, read live by the Energy section (nothing syncs it).
  "energy:read": "Read the energy history of your chargers",
  // contract §2: added by the service; grants no data, permits a refresh token.
  offline_access: "Stay connected between your visits",
};

const SCOPE_WORDS: Readonly<Record<string, string>> = Object.assign({}, OTHER_SCOPE_WORDS, ...SYNCED_RESOURCES.map((resource) => resource.scopeWords));

/** The catalogue's key for a scope's words, when it has one. */
function catalogueKey(scope: string): MessageKey | undefined {
  const key = `scope.${scope}`;
  return Object.hasOwn(CATALOGUES.en, key) ? (key as MessageKey) : undefined;
}

/** One scope in words, in the reader's language (`t`; English by default); an unknown scope as given. */
export function describeScope(scope: string, t: Translator = translator("en")): string {
  const normalized = scope.includes(":") || scope === "offline_access" ? scope : `${scope}:read`;
  const key = catalogueKey(normalized);
  return key ? t(key) : (SCOPE_WORDS[normalized] ?? scope);
}

/** The granted scopes in words, each once, in the order granted (a bare and a `:read` form say the same). */
export function describeScopes(scopes: readonly string[], t?: Translator): string[] {
  return [...new Set(scopes.map((scope) => describeScope(scope, t)))];
}
