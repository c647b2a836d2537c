// The app against an identity provider that is not Hydra (issue 8): RFC 9207 `iss` in the
// authorization response, and refused codes without Hydra's prose. The sandbox's switches:
// POST /_sandbox/idp-behaviour.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { approveInPortal, closeSql, control, installViaPortal, resetWorld, sql, stack, tokenCalls } from "../helpers/stack";
import { failureReason, forgedCallback, visit } from "../helpers/callback";

beforeEach(resetWorld);
afterAll(closeSql);

const setBehaviour = (patch: Record<string, unknown>) => control("POST", "/idp-behaviour", patch);

function appLog(): string {
  return readFileSync(path.join(process.env.TEST_LOG_DIR!, "app.log"), "utf8");
}

/**
 * The app's log lines since `offset` that contain `text`, once at least one has arrived: the log
 * reaches its file through a pipe, a moment after the response that caused it.
 */
async function logLinesSince(offset: number, text: string): Promise<string[]> {
  let lines: string[] = [];
  for (let attempt = 0; attempt < 50 && lines.length === 0; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    lines = appLog().slice(offset).split("\n").filter((line) => line.includes(text));
  }
  return lines;
}

async function claims() {
  return sql<{ state: string; failure: string | null }>("SELECT state, failure FROM authorization_code_claims ORDER BY created_at");
}

describe("RFC 9207: iss in the authorization response", () => {
  it("present and right: the install completes", async () => {
    const callback = await approveInPortal(1001);
    expect(callback.searchParams.get("iss")).toBe(process.env.OAUTH_ISSUER);
    expect((await visit(callback)).headers.get("location")).toBe(`${stack.appUrl}/dashboard`);
  });

  // A missing iss is what a stranger's hand-made request looks like too, so it is a warning; another
  // issuer's is a mix-up attempt or a configuration fault, an error.
  it.each([
    ["absent (while discovery advertises it)", "omit", 40],
    ["another issuer's", "wrong", 50],
  ])("%s: its own page, logged for staff without the code, and the code is never sent", async (_name, iss, level) => {
    await setBehaviour({ iss });
    const callback = await approveInPortal(1001);
    const code = callback.searchParams.get("code")!;
    const logBefore = appLog().length;

    const response = await visit(callback);
    expect(failureReason(response)).toBe("issuer_mismatch");
    expect(response.headers.get("set-cookie")).toBeNull();
    // Not sent: the sandbox saw no token call, and the claim records a failure before sending.
    expect((await tokenCalls()).authorization_code).toBe(0);
    expect(await claims()).toEqual([{ state: "failed", failure: "issuer_mismatch" }]);
    expect(await sql("SELECT 1 FROM token_grants")).toHaveLength(0);

    const logged = (await logLinesSince(logBefore, "is missing or wrong")).join("\n");
    expect(logged).toMatch(new RegExp(`"level":${level}.*issuer \\(iss\\) is missing or wrong`));
    expect(appLog().slice(logBefore)).not.toContain(code);

    // The page says what happened in its own words, not "the service did not answer".
    const page = await (await fetch(new URL(response.headers.get("location")!))).text();
    expect(page).toContain("did not come from the service this app is set up for");
  });
});

describe("refused codes without Hydra's prose", () => {
  it("an expired code from a generic server gets the neutral page, not 'expired'", async () => {
    await setBehaviour({ errorWording: "generic" });
    const callback = await approveInPortal(1001);
    await control("POST", "/clock/advance", { seconds: 61 });
    const response = await visit(callback);
    expect(failureReason(response)).toBe("code_refused");
    const page = await (await fetch(new URL(response.headers.get("location")!))).text();
    // It names the possible causes and both ways out.
    expect(page).toContain("expired");
    expect(page).toContain("already used");
    expect(page).toContain("redirect address does not match");
    expect(page).toContain("operator portal");
    expect(page).toContain("tell the app&#x27;s provider");
  });

  it("a redirect_uri mismatch reads as the neutral page from a generic server, and as a mismatch from Hydra", async () => {
    const misconfigured = { OAUTH_REDIRECT_URI: `${stack.appUrl}/oauth/callback/` };
    await setBehaviour({ errorWording: "generic" });
    const generic = await approveInPortal(1001);
    expect(resultOf(await runAppWorker(["callback", generic.search], misconfigured))).toEqual({ ok: false, reason: "code_refused" });

    await setBehaviour({ errorWording: "hydra" });
    const hydra = await approveInPortal(1002);
    expect(resultOf(await runAppWorker(["callback", hydra.search], misconfigured))).toEqual({ ok: false, reason: "redirect_mismatch" });
  });

  it("three refusals of fresh codes within minutes raise the alarm at error level; an install clears it", async () => {
    await setBehaviour({ errorWording: "generic" });
    const logBefore = appLog().length;
    for (let i = 0; i < 3; i++) {
      expect(failureReason(await visit(forgedCallback(`volt_ac_refused${i}`)))).toBe("code_refused");
    }
    const logged = await logLinesSince(logBefore, "keeps refusing fresh authorization codes");
    expect(logged).toHaveLength(1); // on the third refusal, not before
    expect(logged[0]).toContain('"level":50');

    const { readCodeRefusalAlarm } = await import("@/lib/installs/code-claims");
    const { CODE_REFUSAL_FAILURES } = await import("@/lib/installs/connect");
    expect(await readCodeRefusalAlarm(CODE_REFUSAL_FAILURES)).toMatchObject({ raised: true, refusals: 3 });
    await installViaPortal(1001);
    expect(await readCodeRefusalAlarm(CODE_REFUSAL_FAILURES)).toEqual({ raised: false });
  });
});
