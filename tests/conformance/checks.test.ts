// Every conformance check against the deliberately wrong app (wrong-app.ts): PASS while it keeps the obligation, and
// FAIL, with the evidence that names what went wrong, once one switch breaks it. A check that could not fail would
// prove nothing about the apps it passes.
import { describe, expect, it } from "vitest";
import { CHECKS } from "../../conformance/checks";
import { runConformance } from "../../conformance/run";
import { evidenceOf, setUpWrongAppWorld } from "./helpers";
import type { Wrongness } from "./wrong-app";

const world = setUpWrongAppWorld();

/** Each check, the ways of breaking it, and what its evidence must then say. */
const CASES: { check: string; wrong: Wrongness; evidence: RegExp }[] = [
  { check: "install.redeem", wrong: "redeem-late", evidence: /redeemed only after the app had answered the redirect/ },
  { check: "install.redeem", wrong: "pkce", evidence: /no PKCE \(no code_verifier\): NO/ },
  { check: "install.redeem", wrong: "basic-auth", evidence: /client_secret_post \(credentials in the form\): NO/ },
  { check: "install.redeem", wrong: "other-redirect-uri", evidence: /the exact redirect_uri: NO/ },
  { check: "install.reused-callback", wrong: "redeems-reused-callback", evidence: /the same callback URL again: 1 more code redemption\(s\) \(invalid_grant×1\)[\s\S]*chains revoked for a reused code: 1 \(code_reuse\)/ },
  { check: "install.declined", wrong: "calls-on-deny", evidence: /token requests after the denial: 1/ },
  { check: "tokens.single-refresh", wrong: "refresh-per-page", evidence: /12 pages at once after the access token expired: (?:[2-9]|1\d) refresh request\(s\)/ },
  { check: "tokens.single-refresh", wrong: "refresh-every-page", evidence: /2 pages one after the other right after the install: 2 refreshes while the token was still valid/ },
  { check: "tokens.rotation", wrong: "keeps-old-refresh-token", evidence: /a used refresh token was presented again[\s\S]*chain revoked: yes \(refresh_token_reuse\)/ },
  { check: "tokens.refused-refresh", wrong: "retries-refused-refresh", evidence: /4 pages after the refresh token expired: [2-9] refresh request\(s\) \(invalid_grant×[2-9]\)/ },
  { check: "tokens.invalid-client", wrong: "ignores-invalid-client", evidence: /token requests while the service answers invalid_client, over 4 pages and a keep-alive run: [2-9] \(invalid_client×[2-9]\)/ },
  { check: "tokens.keep-alive", wrong: "no-keep-alive", evidence: /keep-alive run 24 days after the install \(\/cron\/keep-alive 200\): refreshes none/ },
  { check: "webhooks.forged", wrong: "unsigned-webhooks", evidence: /the app answered 200 \(401 expected\)[\s\S]*answered 200, then stopped using the install: it acted on the forged delivery \(after the delivery, the page called the API for the install: none\)/ },
  { check: "webhooks.forged", wrong: "verifies-after-acting", evidence: /^answered 401, then stopped using the install: it acted on the refused body \(after the delivery, the page called the API for the install: none\)/ },
  { check: "webhooks.unsigned", wrong: "unsigned-webhooks", evidence: /the app answered 200 \(a 4xx refusal expected\)[\s\S]*after the delivery, the page called the API for the install: none/ },
  { check: "webhooks.stale", wrong: "no-freshness-check", evidence: /^answered 200, then stopped using the install: it acted on the stale delivery \(after the delivery, the page called the API for the install: none\)/ },
  { check: "webhooks.future-dated", wrong: "no-freshness-check", evidence: /after the delivery, the page called the API for the install: none/ },
  { check: "webhooks.oversize", wrong: "no-size-limit", evidence: /after the delivery, the page called the API for the install: none/ },
  { check: "webhooks.replayed", wrong: "replay-revokes-by-operator", evidence: /after the replay, the page called the API for the install: none/ },
  { check: "webhooks.genuine-revoked", wrong: "slow-webhooks", evidence: /install.revoked answered no answer within 10000 ms|install.revoked answered null/ },
  { check: "webhooks.genuine-revoked", wrong: "uses-revoked-tokens", evidence: /API calls with the install's tokens over 3 pages afterwards \(and the scheduled work\): [3-9]\d* \(401×[3-9]/ },
  { check: "reauth.stop-and-resume", wrong: "calls-while-flagged", evidence: /API calls after NEEDS_REAUTH over 3 pages and the scheduled work \(\/cron\/sync 200\): [3-9] \(NEEDS_REAUTH×[3-9]\)/ },
  { check: "rate.burst", wrong: "no-budget", evidence: /16 pages at once and the scheduled work \(\/cron\/sync 200\): \d+ API requests, [1-9]\d* × 429/ },
  { check: "rate.resets-in", wrong: "ignores-resets-in", evidence: /API calls before those [2-4] s were over: [1-9]\d* \(429×/ },
  { check: "uninstall.reinstall", wrong: "uses-revoked-tokens", evidence: /API calls with the revoked install's tokens \(3 pages, an hour later too, \/cron\/sync 200, \/cron\/keep-alive 200\): [3-9] \(401×[3-9]\)/ },
];

describe("each check passes against an app that keeps the obligation", () => {
  // The whole-run checks judge what a run saw: they are proven below, with the checks that feed them.
  for (const check of CHECKS.filter((c) => !["install.no-authorization", "webhooks.deadline"].includes(c.id))) {
    it(`${check.id} passes`, async () => {
      const result = await world.judge(check.id);
      expect(result.verdict, evidenceOf(result)).toBe("PASS");
    });
  }
});

describe("each check fails against an app that breaks it, with the evidence", () => {
  for (const { check, wrong, evidence } of CASES) {
    it(`${check} fails when the app ${wrong}`, { timeout: 40_000 }, async () => {
      const result = await world.judge(check, wrong);
      expect(result.verdict, evidenceOf(result)).toBe("FAIL");
      expect(evidenceOf(result)).toMatch(evidence);
    });
  }

  it("install.no-authorization fails when the app builds-authorization-url: its page links to the authorization endpoint, and it called it", async () => {
    const [, whole] = await world.judgeRun(["install.declined", "install.no-authorization"], "builds-authorization-url");
    expect(whole!.verdict).toBe("FAIL");
    expect(evidenceOf(whole!)).toMatch(/authorization requests the portal did not build, over the whole run: [1-9]/);
    expect(evidenceOf(whole!)).toMatch(/app pages with an authorization URL, of \d+ seen: [1-9]\d* \(\/oauth\/callback, \/dashboard\)/);
    const [, fine] = await world.judgeRun(["install.declined", "install.no-authorization"]);
    expect(fine!.verdict, evidenceOf(fine!)).toBe("PASS");
  });

  it("webhooks.deadline fails when the app slow-webhooks, and passes over a run of every webhook check otherwise", { timeout: 60_000 }, async () => {
    const [, slow] = await world.judgeRun(["webhooks.genuine-revoked", "webhooks.deadline"], "slow-webhooks");
    expect(slow!.verdict).toBe("FAIL");
    expect(evidenceOf(slow!)).toMatch(/deliveries answered after 10 s or not at all: 1 of \d+/);
    const results = await world.judgeRun([...CHECKS.filter((c) => c.group === "webhooks").map((c) => c.id)]);
    expect(results.map((r) => `${r.id} ${r.verdict}`)).toEqual(CHECKS.filter((c) => c.group === "webhooks").map((c) => `${c.id} PASS`));
  });

  it("every check can fail: each has at least one breaking case", () => {
    const covered = new Set([...CASES.map((c) => c.check), "install.no-authorization", "webhooks.deadline"]);
    expect(CHECKS.map((c) => c.id).filter((id) => !covered.has(id))).toEqual([]);
  });
});

describe("a check the run cannot make is NOT RUN, never PASS", () => {
  it("keep-alive without a trigger or a way to move the app's clock is NOT RUN with the reason, and the run does not pass", async () => {
    const keepAlive = CHECKS.filter((c) => c.id === "tokens.keep-alive");
    const base = { sandboxUrl: world.sandbox.url, pageUrl: `${world.app.url}/dashboard` };
    const noTrigger = await runConformance(base, { checks: keepAlive });
    expect(noTrigger.results[0]).toMatchObject({ verdict: "NOT RUN", evidence: [expect.stringContaining("no keep-alive trigger was given")] });
    expect(noTrigger.passed).toBe(false);
    const noClock = await runConformance({ ...base, keepAlive: { url: `${world.app.url}/cron/keep-alive` } }, { checks: keepAlive });
    expect(noClock.results[0]).toMatchObject({ verdict: "NOT RUN", evidence: [expect.stringContaining("no way to move the app's clock was given")] });
    // Left out on request, it does not fail the run.
    const skipped = await runConformance({ ...base, skip: ["tokens.keep-alive"] }, { checks: keepAlive });
    expect(skipped).toMatchObject({ passed: true, results: [{ verdict: "NOT RUN" }] });
  });
});
