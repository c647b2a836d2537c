// Sessions end: sign-out revokes the session on the server (a copied cookie stops working), and no
// session outlives its absolute lifetime, however fresh its cookie (lib/auth/sessions.ts).
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { freePort } from "../helpers/callback";
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

/** What next-auth's session endpoint (the one browser code reads) answers for this cookie. */
async function sessionEndpoint(cookie: string, appUrl = stack.appUrl): Promise<Record<string, unknown>> {
  const response = await fetch(`${appUrl}/api/auth/session`, { headers: { Cookie: cookie } });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
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

  it("next-auth's session endpoint answers {} for a revoked session, staff or operator: no email, no user", async () => {
    const copy = await staffCookie();
    expect(await sessionEndpoint(copy)).toMatchObject({ staff: { email: required("STAFF_DEV_EMAIL") } });
    await signOutWithFetch(copy);
    expect(await sessionEndpoint(copy)).toEqual({});

    const { sessionCookie } = await installViaPortal(1001);
    expect(await sessionEndpoint(sessionCookie)).toMatchObject({ operator: { operatorId: "1001" } });
    await signOutWithFetch(sessionCookie);
    expect(await sessionEndpoint(sessionCookie)).toEqual({});
  });

  it("a session revoked elsewhere (another device signed it out) answers {} here too", async () => {
    const staff = await staffCookie();
    const { sessionCookie: operator } = await installViaPortal(1001);
    await sql("UPDATE sessions SET revoked_at = now()");
    expect(await sessionEndpoint(staff)).toEqual({});
    expect(await sessionEndpoint(operator)).toEqual({});
    expect(await consoleAdmits(staff)).toBe(false);
  });

  it("a live session shows only what the app put in it: no user object with the email", async () => {
    const session = await sessionEndpoint(await staffCookie());
    expect(Object.keys(session).sort()).toEqual(["expires", "staff"]);
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
    expect(await sessionEndpoint(operatorCookie)).toEqual({});
    expect(await sessionEndpoint(staff)).toEqual({});
  });

  it("a cookie without a session row (forged with the secret, or from before sessions were recorded) is refused", async () => {
    const { sessionCookie } = await installViaPortal(1001);
    await sql("DELETE FROM sessions");
    expect(await dashboardWith(sessionCookie)).toContain(NOT_SIGNED_IN);
  });
});

describe("a staff account removed from STAFF_USERS", () => {
  it("its session reads as none at the next request: {} from the session endpoint, and no console", async () => {
    const cookie = await staffCookie();
    const email = required("STAFF_DEV_EMAIL");
    // The same build and database, as after a redeploy whose STAFF_USERS no longer lists this account.
    const remaining = required("STAFF_USERS")
      .split(",")
      .filter((entry) => !entry.startsWith(`${email}=`))
      .join(",");
    const port = await freePort();
    const serverJs = path.resolve(process.env.NEXT_DIST_DIR || ".next", "standalone", "server.js");
    const child = spawn(process.execPath, [serverJs], {
      env: { ...process.env, NODE_ENV: "production", PORT: String(port), HOSTNAME: "127.0.0.1", __NEXT_PROCESSED_ENV: "true", STAFF_USERS: remaining },
      stdio: "ignore",
    });
    try {
      const appUrl = `http://127.0.0.1:${port}`;
      for (let i = 0; !(await fetch(`${appUrl}/api/health`).catch(() => undefined))?.ok; i++) {
        if (i > 300) throw new Error("the second server did not start");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await sessionEndpoint(cookie, appUrl)).toEqual({});
      const admin = await fetch(`${appUrl}/admin`, { headers: { Cookie: cookie }, redirect: "manual" });
      expect(admin.headers.get("location") ?? "").toContain("/admin/sign-in");
      // The account still listed on the stack's own server is still signed in there.
      expect(await sessionEndpoint(cookie)).toMatchObject({ staff: { email } });
    } finally {
      child.kill("SIGTERM");
    }
  });
});

describe("one session read per page", () => {
  it("the layout and the page share one read of the session (cookie decrypted, row checked) per request, operator and staff", async () => {
    const { sessionCookie } = await installViaPortal(1001);
    const staff = await staffCookie();
    // A server of the same build with LOG_LEVEL=debug, whose log says "session read" at each read
    // (lib/auth/request-session.ts): counted around each request.
    const port = await freePort();
    const serverJs = path.resolve(process.env.NEXT_DIST_DIR || ".next", "standalone", "server.js");
    const child = spawn(process.execPath, [serverJs], {
      env: { ...process.env, NODE_ENV: "production", PORT: String(port), HOSTNAME: "127.0.0.1", __NEXT_PROCESSED_ENV: "true", LOG_LEVEL: "debug" },
      stdio: ["ignore", "pipe", "ignore"],
    });
    let log = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
    const reads = () => log.split("\n").filter((line) => line.includes('"msg":"session read"'));
    try {
      const appUrl = `http://127.0.0.1:${port}`;
      for (let i = 0; !(await fetch(`${appUrl}/api/health`).catch(() => undefined))?.ok; i++) {
        if (i > 300) throw new Error("the second server did not start");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const readsFor = async (pagePath: string, cookie: string, expectText: string) => {
        const before = reads().length;
        const response = await fetch(`${appUrl}${pagePath}`, { headers: { Cookie: cookie }, redirect: "manual" });
        expect(response.status).toBe(200);
        expect(await response.text()).toContain(expectText);
        await new Promise((resolve) => setTimeout(resolve, 200)); // the log line's write
        return reads().slice(before);
      };
      // The dashboard's layout and its Overview page both ask for the operator: one read.
      const operatorReads = await readsFor("/dashboard", sessionCookie, 'data-testid="install-status"');
      expect(operatorReads).toHaveLength(1);
      expect(operatorReads[0]).toContain('"kind":"operator"');
      // The console's layout and its install list both call requireStaff(): one read.
      const staffReads = await readsFor("/admin", staff, 'data-testid="count-total"');
      expect(staffReads).toHaveLength(1);
      expect(staffReads[0]).toContain('"kind":"staff"');
      // The next request reads its own cookie again (nothing is kept between requests).
      expect(await readsFor("/admin", staff, 'data-testid="count-total"')).toHaveLength(1);
      // The cookie itself never reaches the line.
      expect(log).not.toContain(sessionCookie.split("=")[1]!);
    } finally {
      child.kill("SIGTERM");
    }
  });
});
