// A refresh storm (issue 9): many installs whose access tokens expire together, with a slow identity
// provider. Every refresh must be under way at once (up to REFRESH_CONCURRENCY, 50 by default), and
// none may hold one of the pool's connections while it waits (lib/oauth/refresh-lock.ts), so a page
// that needs no refresh is served while they all wait. Counts and order, never times: the identity
// provider holds every refresh until the test has looked.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, control, installViaPortal, resetWorld, sql, stack, tokenCalls } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

beforeEach(resetWorld);
afterAll(closeSql);

type TokenStats = { refreshes_issued: number; refreshes_in_flight: number; max_refreshes_in_flight: number; chain_revocations: number };
const tokenStats = () => control<TokenStats>("GET", "/token-stats");

/** The dashboard as the operator's browser asks for it: whether it showed their charge points. */
async function dashboard(sessionCookie: string): Promise<"served" | string> {
  const response = await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: sessionCookie } });
  const html = await response.text();
  if (response.status !== 200) return `HTTP ${response.status}`;
  const failure = /role="alert" data-reason="([a-z_]+)"/.exec(html);
  if (failure) return `failed: ${failure[1]}`;
  return html.includes('data-testid="charge-point-count"') ? "served" : "no charge points";
}

describe("a refresh storm", () => {
  it("20 installs expiring together refresh at once, and a page that needs no refresh is served while they all wait", async () => {
    const STORM = 20;
    // One live install per operator: the test stack seeds extra operators (SANDBOX_OPERATORS). Each
    // from its own address, as 20 operators' browsers would be (the redirect_uri's limit is per address).
    const storm = [];
    for (let i = 0; i < STORM; i++) storm.push(await installViaPortal(1004 + i, { clientAddress: `198.51.100.${i + 1}` }));
    const calm = await installViaPortal(1001);
    await sql("UPDATE token_grants SET access_token_expires_at = now() - interval '1 minute' WHERE install_row_id = ANY($1)", [
      storm.map((install) => install.installRowId),
    ]);
    // The identity provider holds each of the 20 refreshes far longer than the rest of the test
    // takes, so "still waiting" is a fact the sandbox reports, not a guess about time.
    await control("POST", "/faults", { tokenEndpoint: { mode: "delay", count: STORM, delayMs: 8_000 } });

    const stormPages = storm.map((install) => dashboard(install.sessionCookie));
    // Wait until every refresh is at the identity provider, or the first one has come back (then
    // the storm was queued behind a limit and the count below says by how much).
    let stats = await tokenStats();
    while (stats.refreshes_in_flight < STORM && stats.refreshes_issued === 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      stats = await tokenStats();
    }
    expect(stats).toMatchObject({ refreshes_in_flight: STORM, refreshes_issued: 0 });

    // A page for an install whose token is fresh: it needs the pool, not the identity provider.
    expect(await dashboard(calm.sessionCookie)).toBe("served");
    // ...and it was served while all 20 refreshes were still waiting on the identity provider.
    expect(await tokenStats()).toMatchObject({ refreshes_in_flight: STORM, refreshes_issued: 0 });

    // Then the storm itself: every page served, one refresh per install, no chain lost.
    expect(await Promise.all(stormPages)).toEqual(Array(STORM).fill("served"));
    expect((await tokenCalls()).refresh_token).toBe(STORM);
    expect(await tokenStats()).toMatchObject({ refreshes_issued: STORM, chain_revocations: 0, refreshes_in_flight: 0, max_refreshes_in_flight: STORM });
    const grants = await sql<{ version: number; refresh_started_at: Date | null }>(
      "SELECT version, refresh_started_at FROM token_grants WHERE install_row_id = ANY($1)",
      [storm.map((install) => install.installRowId)],
    );
    expect(grants).toHaveLength(STORM);
    expect(grants.every((grant) => grant.version === 2 && grant.refresh_started_at === null)).toBe(true);
  }, scaled(60_000));
});
