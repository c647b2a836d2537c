// Contract §1.3 and §1.7: the service starts the flow. The app must not build an authorization URL,
// must not offer its own connect button, and sends no PKCE (client_secret_post only). This reads the
// app's own source (app/, lib/) and fails on anything that would start an authorization: openid-client's
// URL and PKCE helpers, the authorize endpoint's path or discovery field, or the request's parameters.
// The sandbox (sandbox/) plays the service and is allowed all of them.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(__dirname, "../..");
const FORBIDDEN = [
  "buildAuthorizationUrl",
  "randomPKCECodeVerifier",
  "calculatePKCECodeChallenge",
  "authorization_endpoint",
  "/oauth2/auth",
  "code_challenge",
  "response_type",
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" ? [] : sourceFiles(path);
    return /\.(ts|tsx|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

describe("the app never starts an authorization (contract §1.3, §1.7)", () => {
  const files = ["app", "lib"].flatMap((folder) => sourceFiles(join(root, folder)));

  it("reads the app's source", () => {
    expect(files.map((f) => relative(root, f))).toEqual(expect.arrayContaining(["app/oauth/callback/route.ts", "lib/installs/connect.ts"]));
  });

  it("has no authorization URL, PKCE or authorize-request parameter anywhere in app/ or lib/", () => {
    const found = files.flatMap((file) => {
      const text = readFileSync(file, "utf8");
      return FORBIDDEN.filter((word) => text.includes(word)).map((word) => `${relative(root, file)}: ${word}`);
    });
    expect(found).toEqual([]);
  });
});
