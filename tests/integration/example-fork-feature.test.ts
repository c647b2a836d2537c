// The file to copy when your fork adds a feature: one test per way of driving the sandbox, each
// asserting what the app did (counts and outcomes), against the stack `npm test` starts for it.
// docs/testing.md explains each step; run this file alone with
//
//   npm test -- vitest tests/integration/example-fork-feature.test.ts
//
// The stack: a fresh PostgreSQL, the sandbox (the service's stand-in) and the app's production
// build. Their addresses and secrets arrive in the environment; tests/helpers/stack.ts reads them
// (`stack.appUrl`, `stack.sandboxUrl`, `stack.webhookSecret`) and wraps the sandbox's control API.
// No job worker runs: nothing syncs or refreshes in the background unless a test asks.
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  apiRequestCounts,
  armApiFault,
  clearApiFaults,
  closeSql,
  control,
  installViaPortal,
  operatorRecords,
  resetWorld,
  sql,
  stack,
} from "../helpers/stack";

// Every test starts from an empty world: the app's tables truncated, the sandbox reset (its
// installs, tokens, clock, faults and counters). Tests in one file share the stack, so never skip this.
beforeEach(resetWorld);
// An armed fault outlives a failed assertion; clear it so it cannot leak into the next test.
afterEach(clearApiFaults);
// The helpers' database pool; Vitest would wait on it otherwise.
afterAll(closeSql);

// One of the seeded operators (sandbox/seed.ts): Northwind, with 23 charge points. The seed is the
// same on every start and reset, so a test may name it; `control("GET", "/operators")` lists them all.
const OPERATOR_ID = 1001;

/** A dashboard page as the signed-in operator sees it: the session cookie is all it takes. */
async function page(sessionCookie: string, path: string) {
  const response = await fetch(`${stack.appUrl}${path}`, { headers: { cookie: sessionCookie } });
  return { status: response.status, html: await response.text() };
}

/** The sandbox's token counters for one install (GET /_sandbox/installs/:id/token-stats). */
type TokenStats = { calls: { authorization_code: number; refresh_token: number }; refreshes_issued: number; chain_revocations: number };
const tokenStats = (installId: number) => control<TokenStats>("GET", `/installs/${installId}/token-stats`);

describe("an operator uses the app (the example a fork copies)", () => {
  it("installs through the portal and sees their charge points, read through the install's token", async () => {
    // The whole handshake, as a browser walks it: portal → Connect → consent → Approve → the app's
    // redirect_uri. It returns the app's row id, the service's install_id and the session cookie.
    const { installRowId, installId, sessionCookie } = await installViaPortal(OPERATOR_ID);

    // The database, read as stored (raw SQL: what a migration made, not what Prisma maps).
    const [row] = await sql<{ status: string; operator_id: string }>("SELECT status, operator_id FROM installs WHERE id = $1", [installRowId]);
    expect(row).toEqual({ status: "ACTIVE", operator_id: String(OPERATOR_ID) });

    // Before the first sync, the charge points page reads the API live: its first 10 rows are the
    // operator's first 10 charge points as the sandbox lists them.
    const { data: chargePoints } = await operatorRecords(OPERATOR_ID, "charge-points");
    const dashboard = await page(sessionCookie, "/dashboard/charge-points");
    expect(dashboard.status).toBe(200);
    for (const cp of chargePoints.slice(0, 10)) expect(dashboard.html).toContain(`data-charge-point-id="${cp.id}"`);

    // What the service saw: one code redeemed, no refresh, and every API request answered 200.
    expect((await tokenStats(installId)).calls).toEqual({ authorization_code: 1, refresh_token: 0 });
    const requests = await apiRequestCounts(installId);
    expect(requests.total).toBeGreaterThan(0);
    expect(requests.byStatus).toEqual({ "200": requests.total });
  });

  it("the service's clock passes the access token's hour: the next page refreshes once and works", async () => {
    const { installRowId, installId, sessionCookie } = await installViaPortal(OPERATOR_ID);

    // Only the sandbox's clock moves: its tokens expire, while the app still believes its token has
    // most of its hour left. The app meets a 401, re-reads its store, refreshes once, and retries.
    await control("POST", "/clock/advance", { seconds: 3601 });
    expect((await page(sessionCookie, "/dashboard/charge-points")).html).toContain('data-testid="charge-points"');

    const stats = await tokenStats(installId);
    expect(stats.calls.refresh_token).toBe(1);
    expect(stats.refreshes_issued).toBe(1);
    expect(stats.chain_revocations).toBe(0); // a used refresh token was never presented again
    const [grant] = await sql<{ version: number }>("SELECT version FROM token_grants WHERE install_row_id = $1", [installRowId]);
    expect(grant!.version).toBe(2); // the rotated pair replaced the first one
  });

  it("the API answers 503: the page says so, then recovers once the fault is used up", async () => {
    const { installId, sessionCookie } = await installViaPortal(OPERATOR_ID);

    // Four 503s on the charge points route, this install only: the first request and the app's three
    // retries of a GET (API_MAX_RETRIES, default 3). A faulted request does not spend the budget.
    await armApiFault({ path: "/charge-points", mode: "error503", count: 4, installId });
    const failed = await page(sessionCookie, "/dashboard/charge-points");
    expect(failed.status).toBe(200); // the rest of the page still renders
    expect(failed.html).toContain('data-reason="unavailable"');
    expect((await apiRequestCounts(installId)).faulted).toBe(4);

    // The fault is spent: the same page works again.
    expect((await page(sessionCookie, "/dashboard/charge-points")).html).toContain('data-testid="charge-points"');
  });
});

describe("webhooks (contract §6)", () => {
  const configOf = async (installId: number) =>
    (await sql<{ config: Record<string, unknown> | null }>("SELECT config FROM installs WHERE install_id = $1", [installId]))[0]!.config;

  it("a delivery the sandbox dropped is replayed: stored once, and a second replay changes nothing", async () => {
    const { installId } = await installViaPortal(OPERATOR_ID);

    // The next install.config.updated is lost on the way, as in production; the sandbox keeps it.
    await control("POST", "/webhook-modes", { type: "install.config.updated", mode: "drop", count: 1 });
    const saved = await control<{ delivery: { delivery_id: string; ok: boolean } }>("POST", `/installs/${installId}/config`, { syncCharges: false });
    expect(saved.delivery.ok).toBe(false);
    expect(await configOf(installId)).toBeNull(); // the app never heard of it

    // Replaying sends the same id and data, with a new delivered_at, freshly signed.
    const first = await control<{ ok: boolean; attempts: { status: number }[] }>("POST", `/deliveries/${saved.delivery.delivery_id}/replay`);
    expect(first).toMatchObject({ ok: true, attempts: [{ status: 200 }] });
    expect(await configOf(installId)).toMatchObject({ syncCharges: false });

    // Again: the app answers 200 (a duplicate) and keeps one row for the delivery id (lib/webhooks/receive.ts
    // keys each delivery by `id:<delivery id>`).
    const second = await control<{ ok: boolean; attempts: { status: number }[] }>("POST", `/deliveries/${saved.delivery.delivery_id}/replay`);
    expect(second).toMatchObject({ ok: true, attempts: [{ status: 200 }] });
    const rows = await sql("SELECT outcome FROM webhook_deliveries WHERE dedupe_key = $1", [`id:${saved.delivery.delivery_id}`]);
    expect(rows).toEqual([{ outcome: "processed" }]);
  });

  it("a delivery you sign yourself reaches the handler; the same bytes signed with another secret do not", async () => {
    const { installId } = await installViaPortal(OPERATOR_ID);
    const body = JSON.stringify({
      id: `whd_${randomUUID()}`,
      type: "install.config.updated",
      delivered_at: Math.floor(Date.now() / 1000), // the wall clock: the sandbox's clock is not the app's
      data: { install_id: installId, operator_id: OPERATOR_ID, config: { siteIds: [], syncCharges: true, currency: "NOK" } },
    });
    // The service's signature: HMAC-SHA256 of the raw bytes, hex, after "sha256=" (lib/webhooks/signature.ts).
    const send = (secret: string) =>
      fetch(`${stack.appUrl}/api/webhooks`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Volt-Signature": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}` },
        body,
      });

    expect((await send("not-the-webhook-secret")).status).toBe(401);
    expect(await configOf(installId)).toBeNull();

    const accepted = await send(stack.webhookSecret);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toEqual({ status: "processed" });
    expect(await configOf(installId)).toMatchObject({ currency: "NOK" });
  });
});
