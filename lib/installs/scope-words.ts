// What each scope lets the app do, in the operator's words: the one place the dashboard (and anything
// else shown to an operator) turns a scope string into a sentence. contract §2: scopes are
// `<resource>` or `<resource>:<permission>`, and a bare resource means read only. A scope not listed
// here is shown exactly as granted: the operator consented to that string, so it is never hidden.
//
// A synced resource's scopes are worded in its declaration (lib/sync/resources.ts); the scopes below
// belong to no synced resource.
import "server-only";
import { SYNCED_RESOURCES } from "@/lib/sync/resources";

const OTHER_SCOPE_WORDS: Readonly<Record<string, string>> = {
  // contract §4.3: the beta EVSE charge history, read live by the Energy section (nothing syncs it).
  "energy:read": "Read the energy history of your chargers",
  // contract §2: added by the service; grants no data, permits a refresh token.
  offline_access: "Stay connected between your visits",
};

const SCOPE_WORDS: Readonly<Record<string, string>> = Object.assign({}, OTHER_SCOPE_WORDS, ...SYNCED_RESOURCES.map((resource) => resource.scopeWords));

/** One scope in words; an unknown scope as given. */
export function describeScope(scope: string): string {
  const normalized = scope.includes(":") || scope === "offline_access" ? scope : `${scope}:read`;
  return SCOPE_WORDS[normalized] ?? scope;
}

/** The granted scopes in words, each once, in the order granted (a bare and a `:read` form say the same). */
export function describeScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes.map(describeScope))];
}
