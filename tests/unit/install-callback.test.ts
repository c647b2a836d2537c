import { describe, expect, it } from "vitest";
import { reasonForInvalidGrant } from "@/lib/installs/connect";
import { scrubSecrets } from "@/lib/log";

describe("reasonForInvalidGrant", () => {
  const generic =
    "The provided authorization grant (e.g., authorization code, resource owner credentials) or refresh token is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.";
  it("tells a reused code and a redirect_uri mismatch apart by the identity provider's hint", () => {
    expect(reasonForInvalidGrant(`${generic} The authorization code has already been used.`)).toBe("code_used");
    expect(reasonForInvalidGrant(`${generic} The "redirect_uri" from this request does not match the one from the authorize request.`)).toBe(
      "redirect_mismatch",
    );
    expect(
      reasonForInvalidGrant(`${generic} The OAuth 2.0 Client ID from this request does not match the one from the authorize request.`),
    ).toBe("code_rejected");
  });
  // The bare description is Hydra's answer for an expired or unknown code, but another server may
  // give it (or any other text, or none) for every cause, a redirect_uri mismatch included: the page
  // must not claim "expired" when the app cannot know it.
  it("reads anything it cannot be sure of as the neutral 'refused' page, never as 'expired'", () => {
    expect(reasonForInvalidGrant(generic)).toBe("code_refused");
    expect(reasonForInvalidGrant(undefined)).toBe("code_refused");
    expect(reasonForInvalidGrant("The request was refused.")).toBe("code_refused");
    expect(reasonForInvalidGrant("redirect_uri mismatch")).toBe("code_refused");
  });
});

describe("scrubSecrets", () => {
  it("removes anything shaped like a service token or code", () => {
    const line = "got volt_at_abc123 and volt_rt_def-456 and volt_ac_x.y from the service";
    const scrubbed = scrubSecrets(line);
    expect(scrubbed).not.toMatch(/volt_(at|rt|ac)_/);
    expect(scrubbed).toContain("[redacted-token]");
  });
});
