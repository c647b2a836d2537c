// An old callback URL must never revoke a live install (issue 8). Browser history, autocomplete or a
// proxy log can present a redeemed code again at any time; the identity provider would then revoke
// the whole chain the code produced (contract §3, public-facts.md). The app's own claim of the code
// (lib/installs/code-claims.ts) must stop it for as long as that chain can live.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { approveInPortal, closeSql, control, installViaPortal, resetWorld, sql, stack, tokenCalls } from "../helpers/stack";
import { failureReason, forgedCallback, visit } from "../helpers/callback";

beforeEach(resetWorld);
afterAll(closeSql);

async function claims() {
  return sql<{ state: string; failure: string | null }>("SELECT state, failure FROM authorization_code_claims ORDER BY created_at");
}

async function chainRevocations(): Promise<number> {
  return (await control<{ chain_revocations: number }>("GET", "/token-stats")).chain_revocations;
}

describe("an old callback URL", () => {
  it("opened again after the old one-hour prune age shows 'already used' and never reaches the identity provider", async () => {
    const callback = await approveInPortal(1001);
    const first = await visit(callback);
    expect(first.headers.get("location")).toBe(`${stack.appUrl}/dashboard`);
    const session = first.headers.get("set-cookie")!.split(";")[0]!;
    const [{ install_id: installId }] = (await sql<{ install_id: number }>("SELECT install_id FROM installs")) as [{ install_id: number }];

    // From browser history, hours later. Another callback prunes first (as any callback does).
    await sql("UPDATE authorization_code_claims SET created_at = now() - interval '3 hours', updated_at = now() - interval '3 hours'");
    expect(failureReason(await visit(forgedCallback(`volt_ac_someoneElse`)))).toMatch(/^code_/);
    const again = await visit(callback);
    expect(failureReason(again)).toBe("code_used");

    expect((await tokenCalls(installId)).authorization_code).toBe(1);
    expect(await chainRevocations()).toBe(0);
    const dashboard = await fetch(`${stack.appUrl}/dashboard`, { headers: { cookie: session }, redirect: "manual" });
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain('data-testid="install-status"');
  });

  it("a redeemed code's claim goes once its install is revoked; failed claims after an hour", async () => {
    const { installRowId } = await installViaPortal(1001);
    expect(failureReason(await visit(forgedCallback(`volt_ac_refused`)))).toMatch(/^code_/);
    await sql("UPDATE authorization_code_claims SET created_at = now() - interval '2 hours'");
    await visit(forgedCallback(`volt_ac_trigger1`));
    expect((await claims()).map((c) => c.state)).toEqual(["done", "failed"]); // the old failed one is gone, the done one kept

    await sql("UPDATE installs SET status = 'REVOKED' WHERE id = $1", [installRowId]);
    await sql("UPDATE authorization_code_claims SET created_at = now() - interval '2 hours'");
    await visit(forgedCallback(`volt_ac_trigger2`));
    expect((await claims()).map((c) => c.state)).toEqual(["failed"]);
  });
});
