// The authorization-code format the redirect_uri accepts before a code costs anything
// (lib/oauth/authorization-code.ts): codes of real servers pass, junk does not.
import { describe, expect, it } from "vitest";
import { AuthorizationCodeSchema } from "@/lib/oauth/authorization-code";

describe("AuthorizationCodeSchema", () => {
  it.each([
    ["the sandbox's", `volt_ac_${"A".repeat(43)}`],
    ["Hydra's", `ory_ac_${"a".repeat(43)}.${"b".repeat(43)}`],
    ["a long one from another server", "x".repeat(1500)],
  ])("accepts %s code", (_name, code) => {
    expect(AuthorizationCodeSchema.safeParse(code).success).toBe(true);
  });

  it.each([
    ["too short to hold 128 bits", "volt_ac_short"],
    ["too long", "x".repeat(2049)],
    ["non-ASCII", `volt_ac_${"é".repeat(30)}`],
    ["a control character", `volt_ac_${"a".repeat(20)}\n`],
  ])("refuses a code %s", (_name, code) => {
    expect(AuthorizationCodeSchema.safeParse(code).success).toBe(false);
  });
});
