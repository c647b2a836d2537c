// The production server fails fast (instrumentation.ts → lib/env.ts): with nothing configured, or with
// the values of .env.example copied, it stops at once, naming every bad variable, instead of serving
// 500s, and before it says "Ready" (the standalone server.js checks first: scripts/standalone-server.mjs).
// Runs the very build the other tests use (its standalone server), with none of its settings.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/callback";

/**
 * The production server the tests run (the standalone build, as the container image runs it), with
 * exactly these variables: no .env file is read (Next.js is told it already did).
 */
async function startProduction(variables: Record<string, string>): Promise<{ code: number | null; output: string; ms: number }> {
  const started = performance.now();
  const serverJs = path.resolve(process.env.NEXT_DIST_DIR || ".next", "standalone", "server.js");
  const child = spawn(process.execPath, [serverJs], {
    env: {
      NODE_ENV: "production",
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOSTNAME: "127.0.0.1",
      PORT: String(await freePort()),
      NEXT_TELEMETRY_DISABLED: "1",
      __NEXT_PROCESSED_ENV: "true",
      ...variables,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  for (const stream of [child.stdout, child.stderr]) stream.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const code = await new Promise<number | null>((resolve) => child.on("exit", (exitCode) => resolve(exitCode)));
  clearTimeout(killer);
  return { code, output, ms: performance.now() - started };
}

describe("npm start fails fast on a bad configuration", () => {
  it("with nothing configured: exits non-zero within 5 s, naming every required variable, and never says Ready", async () => {
    const { code, output, ms } = await startProduction({});
    expect(output).not.toMatch(/Ready/);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull(); // it exited by itself, not by the test's kill
    expect(ms).toBeLessThan(5_000);
    for (const name of ["APP_URL", "DATABASE_URL", "NEXTAUTH_SECRET", "OAUTH_ISSUER", "OAUTH_CLIENT_SECRET", "TOKEN_ENCRYPTION_KEYS", "WEBHOOK_SECRET"]) {
      expect(output).toContain(`- ${name}: is required but not set`);
    }
  });

  it("with the values of .env.example copied: exits non-zero within 5 s, naming every placeholder, and never says Ready", async () => {
    const example = parseEnv(readFileSync(".env.example", "utf8")) as Record<string, string>;
    const { code, output, ms } = await startProduction(example);
    expect(output).not.toMatch(/Ready/);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(ms).toBeLessThan(5_000);
    for (const name of ["APP_URL", "DATABASE_URL", "NEXTAUTH_SECRET", "TOKEN_ENCRYPTION_KEYS", "CRON_SECRET", "OAUTH_CLIENT_SECRET", "WEBHOOK_SECRET", "STAFF_USERS"]) {
      expect(output).toMatch(new RegExp(`- ${name}: `));
    }
    expect(output).toContain("NEXTAUTH_SECRET: looks like a placeholder copied from .env.example");
  });
});
