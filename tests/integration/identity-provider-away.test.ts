// Never a 500 when the identity provider is away (issue 8). Discovery is cached per process, so each
// test runs the app's lib/ in a fresh OS process (tests/helpers/app-worker.ts) that has never
// discovered: its first token request meets the discovery failure, exactly as a freshly started
// instance would. Every path that can reach the token endpoint must turn it into a state the page
// explains, send nothing, and leave no refresh marker behind.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { approveInPortal, closeSql, control, expireAccessToken, installViaPortal, resetWorld, sql, stack, tokenCalls } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

function issuer(): string {
  const value = process.env.OAUTH_ISSUER;
  if (!value) throw new Error("OAUTH_ISSUER is not set: run the integration tests through `npm test`");
  return value;
}

async function refreshMarker(installRowId: string): Promise<Date | null> {
  const [row] = await sql<{ refresh_started_at: Date | null }>("SELECT refresh_started_at FROM token_grants WHERE install_row_id = $1", [installRowId]);
  return row!.refresh_started_at;
}

const AWAY: [string, () => Promise<Record<string, string>>][] = [
  ["answers 503 (down)", async () => (await control("POST", "/idp-behaviour", { discovery: "503" }), {})],
  ["is misspelt in OAUTH_ISSUER (404)", async () => ({ OAUTH_ISSUER: `${issuer()}-typo` })],
  ["is unreachable (connection refused)", async () => ({ OAUTH_ISSUER: "http://localhost:9/idp" })],
];

describe.each(AWAY)("discovery at refresh time, when the issuer %s", (_name, makeAway) => {
  it("the dashboard read, reconcile, keep-alive and the re-authorization probe each report 'unavailable'; nothing is sent", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    // Due for keep-alive too (its horizon is a week).
    await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day' WHERE install_row_id = $1", [installRowId]);
    const env = await makeAway();

    expect(resultOf(await runAppWorker(["dashboard-read", installRowId], env))).toEqual({ ok: false, reason: "unavailable" });
    expect(resultOf(await runAppWorker(["reconcile", installRowId], env))).toEqual({ outcome: "unavailable" });
    // The job fails and is retried later with backoff (lib/jobs/kinds.ts).
    expect(resultOf<{ outcomes: Record<string, number> }>(await runAppWorker(["keep-alive"], env)).outcomes).toEqual({ retrying: 1 });
    await sql("UPDATE installs SET status = 'NEEDS_REAUTH' WHERE id = $1", [installRowId]);
    expect(resultOf(await runAppWorker(["probe-reauth", installRowId], env))).toEqual({ outcome: "unavailable" });
    await sql("UPDATE installs SET status = 'ACTIVE' WHERE id = $1", [installRowId]);

    // Nothing reached the token endpoint, and no refresh is left "unknown".
    expect((await tokenCalls(installId)).refresh_token).toBe(0);
    expect(await refreshMarker(installRowId)).toBeNull();

    // Once the identity provider is back, the next read simply refreshes.
    await control("POST", "/idp-behaviour", { discovery: "up" });
    expect(resultOf(await runAppWorker(["dashboard-read", installRowId]))).toEqual({ ok: true });
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
  });
});

describe("discovery at the redirect_uri", () => {
  it("a callback while discovery is down claims and sends nothing: the same link works once it is back", async () => {
    const callback = await approveInPortal(1001);
    await control("POST", "/idp-behaviour", { discovery: "503" });
    expect(resultOf(await runAppWorker(["callback", callback.search]))).toEqual({ ok: false, reason: "service_unavailable" });
    expect((await tokenCalls()).authorization_code).toBe(0);
    expect(await sql("SELECT 1 FROM authorization_code_claims")).toHaveLength(0);

    await control("POST", "/idp-behaviour", { discovery: "up" });
    const response = await fetch(callback, { redirect: "manual" });
    expect(response.headers.get("location")).toBe(`${stack.appUrl}/dashboard`);
  });
});
