// A `Next-Action` header names a server action, and server actions live only on pages. On any other
// path (an API route, the build's files under /_next, /favicon.ico) Next.js would try to decode the
// action anyway and answer 500, with an error line per request (an `uncaughtException` when the
// request also forges X-Forwarded-Host). proxy.ts refuses such a request first (lib/http/cross-site.ts,
// `isServerActionOutsidePages`), with a 404 and no error line. On pages, no server-action request a
// stranger can make may get a 500 either (issue 34): a forged X-Forwarded-Host beside the app's own
// Origin, a form's multipart body on a path that is not a page, a body Next.js cannot decode.
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
    // One quiet line per request.
    expect(logged.split("\n").filter((line) => line.includes("server action on a path without pages refused")).length).toBe(forgedHosts.length);
  });

  it("the routes themselves still answer as before without the header", async () => {
    expect((await fetch(`${stack.appUrl}/api/health`)).status).toBe(200);
    expect((await fetch(`${stack.appUrl}/favicon.ico`)).status).toBeLessThan(500);
    // A webhook without a signature is the webhook route's own refusal, not the proxy's.
    const webhook = await fetch(`${stack.appUrl}/api/webhooks`, { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } });
    expect(webhook.status).toBe(401);
  });
});

/** An action the build holds, by its exported name (the build's manifest of server actions). */
function actionId(name: string): string {
  const manifest = JSON.parse(readFileSync(path.resolve(process.env.NEXT_DIST_DIR || ".next", "server", "server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { exportedName?: string }>;
  };
  const found = Object.entries(manifest.node).find(([, entry]) => entry.exportedName === name);
  if (!found) throw new Error(`no server action ${name} in the build`);
  return found[0];
}

/** What a stranger must never cause in the log: an error or fatal line, an uncaught exception, Next.js's error mark (⨯). Its warning for an action id it does not know is A108's. */
function errorsIn(logged: string): string[] {
  return logged.split("\n").filter((line) => /uncaughtException|unhandledRejection|"level":(50|60)|⨯/.test(line));
}

describe("server-action requests a stranger can send to pages", () => {
  const multipart = (fields: Record<string, string>) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    return form;
  };

  it("a forged X-Forwarded-Host beside the app's own Origin never gets a 500, on pages, unknown paths and /favicon.ico<anything>", async () => {
    const offset = statSync(appLog()).size;
    const known = actionId("choosePendingSignInAction");
    const statuses: string[] = [];
    for (const target of ["/favicon.icoX", "/favicon.ico/x", "/favicon.ico", "/", "/dashboard", "/oauth/continue", "/no-such-page"]) {
      for (const id of [randomBytes(21).toString("hex"), known]) {
        for (const forgedHost of ["evil.example", "evil.example:443", "a b"]) {
          const response = await fetch(`${stack.appUrl}${target}`, {
            method: "POST",
            redirect: "manual",
            headers: { "Next-Action": id, "Content-Type": "text/plain;charset=UTF-8", Origin: new URL(stack.appUrl).origin, "X-Forwarded-Host": forgedHost },
            body: "[]",
          });
          await response.arrayBuffer();
          statuses.push(`${target} ${id === known ? "known" : "unknown"} ${forgedHost}: ${response.status}`);
        }
      }
    }
    expect(statuses.filter((line) => / 5\d\d$/.test(line))).toEqual([]);
    expect(errorsIn(await loggedSince(offset))).toEqual([]);
  });

  it("a form's multipart body under /_next or at /favicon.ico is refused with 404, and never a 500 with a forged X-Forwarded-Host", async () => {
    const offset = statSync(appLog()).size;
    const known = actionId("choosePendingSignInAction");
    for (const target of ["/_next/x", "/_next/static/x", "/favicon.ico"]) {
      const response = await fetch(`${stack.appUrl}${target}`, {
        method: "POST",
        redirect: "manual",
        headers: { Origin: new URL(stack.appUrl).origin, "X-Forwarded-Host": "evil.example" },
        body: multipart({ [`$ACTION_ID_${known}`]: "", choice: "stay" }),
      });
      expect(response.status, target).toBe(404);
    }
    expect(errorsIn(await loggedSince(offset))).toEqual([]);
  });

  it("a body Next.js cannot decode is refused with 400 before any action runs, and a wrong argument is refused by the action: never a 500", async () => {
    const offset = statSync(appLog()).size;
    const choose = actionId("choosePendingSignInAction");
    const settings = actionId("saveDisplaySettingsAction");
    const consoleAction = actionId("refreshNowAction");
    const text = (id: string, body: string) => ({ headers: { "Next-Action": id, "Content-Type": "text/plain;charset=UTF-8" }, body });
    const malformed: [string, RequestInit][] = [
      ["empty", text(choose, "")],
      ["cut JSON", text(choose, "[")],
      ["an object", text(choose, '{"a":1}')],
      ["not JSON", text(choose, "x")],
      ["a promise of a missing part", text(choose, '"$@1"')],
      ["a Map of a missing part", text(choose, '["$Q1"]')],
      ["a server reference", text(choose, '["$h1"]')],
      ["a temporary reference", text(choose, '["$T"]')],
      ["a huge BigInt", text(choose, `["$n${"9".repeat(400)}"]`)],
      ["nested too deep", text(choose, `${"[".repeat(5000)}${"]".repeat(5000)}`)],
      ["multipart without its argument list", { headers: { "Next-Action": choose }, body: multipart({ "1_choice": "stay" }) }],
      ["a broken multipart body", { headers: { "Next-Action": choose, "Content-Type": "multipart/form-data; boundary=zz" }, body: '--zz\r\nContent-Disposition: form-data; name="0"\r\n\r\n["$K1"]\r\n--z' }],
      ["a bound action whose bound arguments are missing", { body: multipart({ $ACTION_REF_1: "", "$ACTION_1:0": JSON.stringify({ id: choose, bound: "$@1" }) }) }],
      ["too large", text(choose, `["${"a".repeat(1024 * 1024)}"]`)],
    ];
    const wrongArguments: [string, RequestInit][] = [
      ["no arguments", text(choose, "[]")],
      ["a string for the form", text(choose, '["x"]')],
      ["the settings form as a number", text(settings, "[1]")],
      ["the console's form as a string", text(consoleAction, '[null,"x"]')],
    ];
    const answered: Record<string, number> = {};
    for (const [what, init] of [...malformed, ...wrongArguments]) {
      const response = await fetch(`${stack.appUrl}${what.startsWith("the console") ? "/admin" : what.startsWith("the settings") ? "/dashboard/settings" : "/oauth/continue"}`, { method: "POST", redirect: "manual", ...init });
      await response.arrayBuffer();
      answered[what] = response.status;
    }
    expect(answered).toEqual({
      ...Object.fromEntries(malformed.map(([what]) => [what, what === "too large" ? 413 : 400])),
      // The action ran and refused what it was given (a redirect or the console's sentence, both
      // answered 200 to a fetch action).
      ...Object.fromEntries(wrongArguments.map(([what]) => [what, 200])),
    });
    const logged = await loggedSince(offset);
    expect(errorsIn(logged)).toEqual([]);
    expect(logged.split("\n").filter((line) => line.includes("server action request refused before decoding")).length).toBe(malformed.length);
  });
});
