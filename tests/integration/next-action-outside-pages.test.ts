// A `Next-Action` header names a server action, and server actions live only on pages. On any other
// path (an API route, the build's files under /_next, /favicon.ico) Next.js would try to decode the
// action anyway and answer 500, with an error line per request (an `uncaughtException` when the
// request also forges X-Forwarded-Host). proxy.ts refuses such a request first (lib/http/cross-site.ts,
// `nextActionOutsidePages`), with a 404 and no error line.
import { randomBytes } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, resetWorld, stack } from "../helpers/stack";

const appLog = () => path.join(process.env.TEST_LOG_DIR!, "app.log");

/** What the app logged since `offset` (pino writes asynchronously: give it a moment). */
async function loggedSince(offset: number): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  return readFileSync(appLog()).subarray(offset).toString("utf8");
}

beforeEach(resetWorld);
afterAll(closeSql);

describe("a Next-Action header on a path that is not a page", () => {
  const paths = ["/api/webhooks", "/api/health", "/api/auth/session", "/_next/static/x", "/_next/image", "/favicon.ico"];
  const forgedHosts = [undefined, "evil.example", "evil.example:443"];

  it.each(paths)("POST %s is refused with 404 before Next.js decodes anything, with and without a forged X-Forwarded-Host", async (target) => {
    const offset = statSync(appLog()).size;
    for (const forgedHost of forgedHosts) {
      const response = await fetch(`${stack.appUrl}${target}`, {
        method: "POST",
        redirect: "manual",
        headers: {
          "Next-Action": randomBytes(21).toString("hex"),
          "Content-Type": "text/plain;charset=UTF-8",
          ...(forgedHost ? { "X-Forwarded-Host": forgedHost } : {}),
        },
        body: "[]",
      });
      expect(response.status, `${target} with X-Forwarded-Host ${forgedHost ?? "(none)"}`).toBe(404);
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(await response.text()).not.toMatch(/error|stack|digest/i);
    }
    const logged = await loggedSince(offset);
    expect(logged).not.toContain("uncaughtException");
    expect(logged).not.toMatch(/"level":(50|60)/);
    expect(logged).not.toMatch(/Error: |Failed to find Server Action/);
    // At most one quiet line per request.
    expect(logged.split("\n").filter((line) => line.includes("Next-Action")).length).toBeLessThanOrEqual(forgedHosts.length);
  });

  it("the routes themselves still answer as before without the header", async () => {
    expect((await fetch(`${stack.appUrl}/api/health`)).status).toBe(200);
    expect((await fetch(`${stack.appUrl}/favicon.ico`)).status).toBeLessThan(500);
    // A webhook without a signature is the webhook route's own refusal, not the proxy's.
    const webhook = await fetch(`${stack.appUrl}/api/webhooks`, { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } });
    expect(webhook.status).toBe(401);
  });
});
