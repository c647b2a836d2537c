// The redirect_uri (GET /oauth/callback) against the running app, sandbox and database.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { PRODUCT } from "../helpers/product";
import { approveInPortal, closeSql, resetWorld, sandboxEvents, sql, stack } from "../helpers/stack";
import { failureReason, visit } from "../helpers/callback";

const OPERATOR = 1001;

async function storedCounts() {
  const [row] = await sql<{ installs: number; grants: number }>(
    "SELECT (SELECT count(*)::int FROM installs) AS installs, (SELECT count(*)::int FROM token_grants) AS grants",
  );
  return row!;
}

beforeEach(resetWorld);
afterAll(closeSql);

describe("GET /oauth/callback", () => {
  it("redeems the code inside the callback request, stores the install and signs the operator in", async () => {
    const callback = await approveInPortal(OPERATOR);
    expect(callback.origin + callback.pathname).toBe(`${stack.appUrl}/oauth/callback`);

    const tokenCallsBefore = (await sandboxEvents("token")).length;
    expect(tokenCallsBefore).toBe(0); // nothing redeemed the code before the browser arrived

    const response = await visit(callback);
    // By the time the callback answers, the code has been redeemed (one token call) and the grant
    // is committed: the redemption happened inside the request, not in a queue.
    const tokenCalls = await sandboxEvents("token");
    expect(tokenCalls).toHaveLength(1);
    expect(tokenCalls[0]!.detail).toMatchObject({ grant_type: "authorization_code", status: 200 });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`${stack.appUrl}/dashboard`);
    expect(response.headers.get("set-cookie")).toContain(`${PRODUCT.cookies.session}=`);

    const installs = await sql<{ install_id: number; operator_id: string; status: string; granted_scopes: string[] }>(
      "SELECT install_id, operator_id, status, granted_scopes FROM installs",
    );
    const sandboxInstalls = (await (await fetch(`${stack.sandboxUrl}/_sandbox/installs`)).json()) as { installs: { install_id: number }[] };
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatchObject({ install_id: sandboxInstalls.installs[0]!.install_id, operator_id: String(OPERATOR), status: "ACTIVE" });
    expect(installs[0]!.granted_scopes).toContain("charge-points:read");
    expect((await storedCounts()).grants).toBe(1);
  });

  it("stores no clear-text token: the raw row holds only ciphertext", async () => {
    await visit(await approveInPortal(OPERATOR));
    const rows = await sql<Record<string, unknown>>("SELECT * FROM token_grants");
    expect(rows).toHaveLength(1);
    const raw = JSON.stringify(rows[0]);
    expect(raw).not.toMatch(/volt_(at|rt)_/);
    expect(String(rows[0]!.access_token_encrypted)).toMatch(/^v1\.k1\./);
    expect(String(rows[0]!.refresh_token_encrypted)).toMatch(/^v1\.k1\./);
  });

  it("a reused code gets the 'already used' page and stores nothing new", async () => {
    const callback = await approveInPortal(OPERATOR);
    expect((await visit(callback)).status).toBe(303);
    const before = await storedCounts();
    const again = await visit(callback);
    expect(failureReason(again)).toBe("code_used");
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await storedCounts()).toEqual(before);
  });

  // The identity provider answers an expired code with a bare invalid_grant, which another server
  // may give for any cause: the app shows the neutral page that names them all (issue 8).
  it("an expired code (sandbox clock past 60 s) gets the neutral 'refused' page and stores no token", async () => {
    const callback = await approveInPortal(OPERATOR);
    await fetch(`${stack.sandboxUrl}/_sandbox/clock/advance`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ seconds: 61 }),
    });
    const response = await visit(callback);
    expect(failureReason(response)).toBe("code_refused");
    expect(response.headers.get("set-cookie")).toBeNull();
    expect((await storedCounts()).grants).toBe(0);
    // A reload of the same address says the same thing, without asking the identity provider again.
    expect(failureReason(await visit(callback))).toBe("code_refused");
    expect((await sandboxEvents("token")).length).toBe(1);
  });

  it("an operator who declines lands on a clear page; nothing is redeemed or stored", async () => {
    const callback = await approveInPortal(OPERATOR, "deny");
    expect(callback.searchParams.get("error")).toBe("access_denied");
    const response = await visit(callback);
    expect(failureReason(response)).toBe("access_denied");
    expect(await sandboxEvents("token")).toHaveLength(0);
    expect(await storedCounts()).toEqual({ installs: 0, grants: 0 });
  });

  it.each([
    ["no parameters", ""],
    ["an empty code", "?code="],
    ["an oversized code", `?code=${"x".repeat(5000)}`],
  ])("a stranger's request with %s gets a clear page, never a 500", async (_name, query) => {
    const response = await visit(`${stack.appUrl}/oauth/callback${query}`);
    expect(response.status).toBe(303);
    expect(failureReason(response)).toBe("bad_request");
    expect(await sandboxEvents("token")).toHaveLength(0);
  });

  it("a forged code is refused by the identity provider and stores nothing", async () => {
    // A well-formed code (a malformed one is refused before any outbound call), with the right issuer
    // named (RFC 9207), so the request gets as far as the identity provider.
    const iss = encodeURIComponent(process.env.OAUTH_ISSUER!);
    const response = await visit(`${stack.appUrl}/oauth/callback?code=volt_ac_forgedButWellFormed0123456789&state=whatever-state-value&iss=${iss}`);
    expect(failureReason(response)).toMatch(/^code_/);
    expect(await storedCounts()).toEqual({ installs: 0, grants: 0 });
  });
});
