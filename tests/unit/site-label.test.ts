// A site in words (lib/dashboard/charge-points.ts `siteLabel`): named by its charge points' most
// common address, with the id kept (docs/spec-gaps.md A133), in the operator's language.
import { describe, expect, it } from "vitest";
import { translator } from "@/lib/i18n/messages";
import { siteLabel } from "@/lib/dashboard/charge-points";

describe("a site's label", () => {
  it("in English by default, as the staff console shows it", () => {
    expect(siteLabel("S-1", null)).toBe("Site S-1");
    expect(siteLabel("S-1", { address: "Storgata 1, Oslo", others: 0 })).toBe("Storgata 1, Oslo (site S-1)");
    expect(siteLabel("S-1", { address: "Storgata 1, Oslo", others: 1 })).toBe("Storgata 1, Oslo and 1 other address (site S-1)");
    expect(siteLabel("S-1", { address: "Storgata 1, Oslo", others: 3 })).toBe("Storgata 1, Oslo and 3 other addresses (site S-1)");
  });

  it("in the operator's language on the dashboard", () => {
    const nb = translator("nb");
    expect(siteLabel("S-1", null, nb)).toBe("Sted S-1");
    expect(siteLabel("S-1", { address: "Storgata 1, Oslo", others: 0 }, nb)).toBe("Storgata 1, Oslo (sted S-1)");
    expect(siteLabel("S-1", { address: "Storgata 1, Oslo", others: 2 }, nb)).toBe("Storgata 1, Oslo og 2 andre adresser (sted S-1)");
  });
});
