// Sessions end: sign-out revokes the session on the server (a copied cookie stops working), and no
// session outlives its absolute lifetime, however fresh its cookie (lib/auth/sessions.ts).
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { signInStaffWithFetch, signOutWithFetch } from "../helpers/staff-sign-in";
import { closeSql, installViaPortal, resetWorld, sql, stack } from "../helpers/stack";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the integration tests through \`npm test\``);
  return value;
}

const NOT_SIGNED_IN = "Open this app from your operator portal";

async function dashboardWith(cookie: string): Promise<string> {
  const response = await fetch(`${stack.appUrl}/dashboard`, { headers: { Cookie: cookie } });
  expect(response.status).toBe(200);
  return response.text();
}

/** Whether the console lets this cookie in (it redirects anyone else to the sign-in page). */
async function consoleAdmits(cookie: string): Promise<boolean> {
  const response = await fetch(`${stack.appUrl}/admin`, { headers: { Cookie: cookie }, redirect: "manual" });
  if (response.status === 200) return true;
  expect(response.headers.get("location") ?? "").toContain("/admin/sign-in");
  return false;
}

async function staffCookie(): Promise<string> {
  const result = await signInStaffWithFetch(required("STAFF_DEV_EMAIL"), required("STAFF_DEV_PASSWORD"));
  expect(result.outcome).toBe("ok");
  return result.sessionCookie!;
}

beforeEach(resetWorld);
afterAll(closeSql);

describe("sign-out ends the session on the server", () => {
  it("an operator's copied cookie is refused after sign-out", async () => {
    const { sessionCookie } = await installViaPortal(1001);
    const copy = sessionCookie;
    expect(await dashboardWith(copy)).toContain('data-testid="install-status"');

    await signOutWithFetch(sessionCookie);

    const after = await dashboardWith(copy);
    expect(after).toContain(NOT_SIGNED_IN);
    expect(after).not.toContain('data-testid="install-status"');
    const [row] = await sql<{ revoked_at: Date | null }>("SELECT revoked_at FROM sessions WHERE kind = 'operator'");
    expect(row!.revoked_at).not.toBeNull();
  });

  it("a staff member's copied cookie is refused after sign-out, and other sessions stay", async () => {
    const copy = await staffCookie();
    const otherDevice = await staffCookie();
    expect(await consoleAdmits(copy)).toBe(true);

    await signOutWithFetch(copy);

    expect(await consoleAdmits(copy)).toBe(false);
    expect(await consoleAdmits(otherDevice)).toBe(true);
  });

  it("next-auth's session endpoint reads a revoked session as none", async () => {
    const copy = await staffCookie();
    await signOutWithFetch(copy);
    const session = (await (await fetch(`${stack.appUrl}/api/auth/session`, { headers: { Cookie: copy } })).json()) as Record<string, unknown>;
    expect(session.staff).toBeUndefined();
  });
});

describe("the absolute lifetime", () => {
  it("a session signed in longer ago than SESSION_ABSOLUTE_LIFETIME_SECONDS (12 h) is refused, however fresh its cookie", async () => {
    const { sessionCookie: operatorCookie } = await installViaPortal(1001);
    const staff = await staffCookie();
    expect(await dashboardWith(operatorCookie)).toContain('data-testid="install-status"');
    expect(await consoleAdmits(staff)).toBe(true);

    // Just inside the lifetime: still on.
    await sql("UPDATE sessions SET created_at = now() - interval '11 hours 55 minutes'");
    expect(await consoleAdmits(staff)).toBe(true);

    await sql("UPDATE sessions SET created_at = now() - interval '12 hours 1 minute'");
    expect(await dashboardWith(operatorCookie)).toContain(NOT_SIGNED_IN);
    expect(await consoleAdmits(staff)).toBe(false);
  });

  it("a cookie without a session row (forged with the secret, or from before sessions were recorded) is refused", async () => {
    const { sessionCookie } = await installViaPortal(1001);
    await sql("DELETE FROM sessions");
    expect(await dashboardWith(sessionCookie)).toContain(NOT_SIGNED_IN);
  });
});
