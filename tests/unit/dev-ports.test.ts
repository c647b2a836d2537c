// npm run dev's ports (scripts/lib/local-env.ts, scripts/lib/ports.ts): from the environment or
// .env, the addresses that follow them rewritten with every secret kept, and a clear stop when a
// port is taken instead of "Ready" and a link to somebody else's server.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseEnv } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_DEV_PORTS, devPorts, ensureLocalEnvFile } from "../../scripts/lib/local-env";
import { assertPortsFree, isPortTaken } from "../../scripts/lib/ports";

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((cleanup) => cleanup()));

function tempEnvFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "dev-env-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, ".env");
}

describe("devPorts", () => {
  it("takes PORT, SANDBOX_PORT and DATABASE_PORT from the shell, then .env, else the defaults", () => {
    expect(devPorts({}, {})).toEqual(DEFAULT_DEV_PORTS);
    expect(devPorts({ PORT: "3005" }, { PORT: "3001", SANDBOX_PORT: "4444" })).toEqual({ app: 3005, sandbox: 4444, database: 54320 });
  });

  it("names a value that is not a port", () => {
    expect(() => devPorts({ DATABASE_PORT: "abc" }, {})).toThrow("DATABASE_PORT=abc is not a port");
  });
});

describe("ensureLocalEnvFile", () => {
  it("writes the ports into a new .env, and on a change rewrites the local addresses, keeping every secret", () => {
    const file = tempEnvFile();
    const first = ensureLocalEnvFile(file, DEFAULT_DEV_PORTS);
    expect(first.created).toBe(true);
    expect(first.values).toMatchObject({ PORT: "3000", SANDBOX_PORT: "4010", DATABASE_PORT: "54320", APP_URL: "http://localhost:3000" });

    const moved = ensureLocalEnvFile(file, { app: 3005, sandbox: 4015, database: 54325 });
    expect(moved.created).toBe(false);
    expect(moved.values).toMatchObject({
      PORT: "3005",
      APP_URL: "http://localhost:3005",
      NEXTAUTH_URL: "http://localhost:3005",
      OAUTH_REDIRECT_URI: "http://localhost:3005/oauth/callback",
      WEBHOOK_URL: "http://localhost:3005/api/webhooks",
      SANDBOX_URL: "http://localhost:4015",
      OAUTH_ISSUER: "http://localhost:4015/idp",
      OPERATOR_PORTAL_URL: "http://localhost:4015/portal",
      DATABASE_PORT: "54325",
    });
    for (const secret of ["NEXTAUTH_SECRET", "OAUTH_CLIENT_SECRET", "WEBHOOK_SECRET", "TOKEN_ENCRYPTION_KEYS", "STAFF_USERS"]) {
      expect(moved.values[secret]).toBe(first.values[secret]);
    }
    expect(parseEnv(readFileSync(file, "utf8"))).toMatchObject({ APP_URL: "http://localhost:3005", NEXTAUTH_SECRET: first.values.NEXTAUTH_SECRET });
  });
});

describe("assertPortsFree", () => {
  it("says which port is taken and how to move it", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => server.close());
    const { port } = server.address() as net.AddressInfo;

    expect(await isPortTaken(port)).toBe(true);
    await expect(assertPortsFree([{ port, variable: "PORT", what: "the app" }])).rejects.toThrow(
      new RegExp(`port ${port} \\(the app\\) is already in use[\\s\\S]*PORT=${port + 1} npm run dev`),
    );
    server.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(assertPortsFree([{ port, variable: "PORT", what: "the app" }])).resolves.toBeUndefined();
  });
});
