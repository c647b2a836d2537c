// The scopes the operator granted, in words (lib/installs/scope-words.ts): in the operator's language
// from the catalogue (messages/*.json `scope.<scope>`), the English the same as each synced
// resource's declaration (lib/sync/resources.ts), and a scope nobody worded shown exactly as granted.
import { describe, expect, it } from "vitest";
import { CATALOGUES, translator } from "@/lib/i18n/messages";
import { describeScope, describeScopes } from "@/lib/installs/scope-words";
import { SYNCED_RESOURCES } from "@/lib/sync/resources";

describe("the scope words", () => {
  it("are in the operator's language, a bare resource reading as its :read form", () => {
    expect(describeScopes(["charge-points", "charge-points:read", "offline_access"], translator("nb"))).toEqual([
      "Lese ladepunktene dine",
      "Holde forbindelsen mellom besøkene dine",
    ]);
    expect(describeScope("energy:read", translator("nb"))).toBe("Lese energihistorikken til laderne dine");
    expect(describeScope("charge-points")).toBe("Read your charge points");
  });

  it("in English are the synced resources' own words, wherever the catalogue words the scope", () => {
    for (const resource of SYNCED_RESOURCES) {
      for (const [scope, words] of Object.entries(resource.scopeWords)) {
        if (Object.hasOwn(CATALOGUES.en, `scope.${scope}`)) expect(describeScope(scope), scope).toBe(words);
      }
    }
  });

  it("show a scope nobody worded exactly as granted, in any language", () => {
    expect(describeScope("invoices:read", translator("nb"))).toBe("invoices:read");
    expect(describeScope("custom_thing", translator("nb"))).toBe("custom_thing");
  });
});
