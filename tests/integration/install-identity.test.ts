// Which install a callback belongs to, when the service does not say (docs/spec-gaps.md A2), and
// a redirect_uri that arrives twice at once.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { PRODUCT } from "../helpers/product";
import { approveInPortal, closeSql, control, resetWorld, sql, stack, tokenCalls } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

type Delivery = { detail: { delivery_id: string; event_type: string; install_id: number; mode: string | null } };

async function installs() {
  return sql<{ install_id: number | null; status: string; has_grant: boolean }>(
    `SELECT i.install_id, i.status, EXISTS (SELECT 1 FROM token_grants g WHERE g.install_row_id = i.id) AS has_grant
     FROM installs i ORDER BY i.created_at`,
  );
}
async function dropped(type: string): Promise<Delivery[]> {
  const { deliveries } = await control<{ deliveries: Delivery[] }>("GET", `/deliveries?event_type=${type}`);
  return deliveries.filter((d) => d.detail.mode === "drop");
}

describe("a redirect_uri requested twice at once (a double click, a browser retry)", () => {
  it("redeems the code once and signs both requests in to the same install", async () => {
    const callback = await approveInPortal(1001);
    // Hold the redemption at the identity provider for a second, so the copy surely arrives while the
    // first request is still redeeming (a copy that arrives after it finished is a reuse, and gets
    // the "already used" page: tests/integration/old-callback-url.test.ts).
    await control("POST", "/faults", { tokenEndpoint: { mode: "delay", delayMs: 1000, grantType: "authorization_code" } });
    const [first, second] = await Promise.all([fetch(callback, { redirect: "manual" }), fetch(callback, { redirect: "manual" })]);
    for (const response of [first, second]) {
      expect(response.status).toBe(303);
      expect(response.headers.get("location")).toBe(`${stack.appUrl}/dashboard`);
      expect(response.headers.get("set-cookie")).toContain(`${PRODUCT.cookies.session}=`);
    }
    expect((await tokenCalls()).authorization_code).toBe(1); // presenting it twice would revoke its tokens
    expect(await installs()).toEqual([{ install_id: expect.any(Number), status: "ACTIVE", has_grant: true }]);
  });
});

describe("when /consumers/me does not name the install", () => {
  it("tells a re-install from the old install by its consumer, whatever order the webhooks come in", async () => {
    await control("POST", "/consumers/install-id", { include: false });

    // Install X: install.created names it, the callback binds to it by operator.
    expect((await fetch(await approveInPortal(1001), { redirect: "manual" })).status).toBe(303);
    const [x] = await installs();
    expect(x).toEqual({ install_id: expect.any(Number), status: "ACTIVE", has_grant: true });

    // The operator uninstalls X and re-installs (Z); both webhooks are lost.
    await control("POST", "/webhook-modes", { type: "install.revoked", mode: "drop", count: 1 });
    await control("POST", "/webhook-modes", { type: "install.created", mode: "drop", count: 1 });
    await control("POST", `/installs/${x!.install_id}/revoke`);
    const reinstall = await fetch(await approveInPortal(1001), { redirect: "manual" });
    expect(reinstall.status).toBe(303);

    // The new consent's consumer differs from X's: a new install, X retired; the new tokens are
    // not attached to X.
    expect(await installs()).toEqual([
      { install_id: x!.install_id, status: "REVOKED", has_grant: false },
      { install_id: null, status: "ACTIVE", has_grant: true },
    ]);

    // The lost deliveries are replayed late, in the worst order: the new install is untouched,
    // and learns its install_id.
    const [revokedX] = await dropped("install.revoked");
    const [createdZ] = await dropped("install.created");
    await control("POST", `/deliveries/${revokedX!.detail.delivery_id}/replay`);
    await control("POST", `/deliveries/${createdZ!.detail.delivery_id}/replay`);
    expect(await installs()).toEqual([
      { install_id: x!.install_id, status: "REVOKED", has_grant: false },
      { install_id: createdZ!.detail.install_id, status: "ACTIVE", has_grant: true },
    ]);
    const dashboard = await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: reinstall.headers.get("set-cookie")!.split(";")[0]! } });
    expect(await dashboard.text()).toContain('data-testid="charge-points"');
  });
});
