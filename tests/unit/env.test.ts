// lib/env.ts: values that can never work are refused at start-up with a message that says the fix.
import { describe, expect, it } from "vitest";
import { oauthIssuerSchema } from "@/lib/env";

describe("OAUTH_ISSUER", () => {
  it.each(["https://idp.example.com", "https://idp.example.com/", "https://idp.example.com/oauth", "http://localhost:4000/idp"])(
    "accepts %s",
    (issuer) => {
      expect(oauthIssuerSchema.safeParse(issuer).success).toBe(true);
    },
  );

  // Discovery compares the document's issuer with this value exactly; an issuer with a path never
  // ends in a slash, so this one could never match.
  it("refuses a slash after a path, naming the fix", () => {
    const parsed = oauthIssuerSchema.safeParse("https://idp.example.com/oauth/");
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain("https://idp.example.com/oauth, not https://idp.example.com/oauth/");
  });

  it("still refuses what is not an http(s) URL", () => {
    expect(oauthIssuerSchema.safeParse("idp.example.com/oauth").success).toBe(false);
    expect(oauthIssuerSchema.safeParse("ftp://idp.example.com").success).toBe(false);
  });
});
