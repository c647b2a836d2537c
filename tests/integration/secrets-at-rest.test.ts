// Secrets stay secret: tokens are encrypted at rest under versioned keys, and no token, code or
// secret reaches a log line or the database in clear text.
import { randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { closeSql, expireAccessToken, installViaPortal, resetWorld, sql, stack } from "../helpers/stack";

const TOKEN_SHAPED = /\b[a-z][a-z0-9]*_(?:at|rt|ac)_[A-Za-z0-9._~-]{8,}/;

beforeEach(resetWorld);
afterAll(closeSql);

describe("key rotation", () => {
  it("re-encrypts every grant under a new key; the old key can then be dropped", async () => {
    const { installRowId } = await installViaPortal(1001);
    const oldKeys = process.env.TOKEN_ENCRYPTION_KEYS!; // "k1:..."
    const newKeys = `k2:${randomBytes(32).toString("base64")},${oldKeys}`;

    const result = resultOf<{ checked: number; reencrypted: number }>(await runAppWorker(["reencrypt"], { TOKEN_ENCRYPTION_KEYS: newKeys }));
    expect(result).toEqual({ checked: 1, reencrypted: 1 });
    const [row] = await sql<{ access_token_encrypted: string; refresh_token_encrypted: string }>(
      "SELECT access_token_encrypted, refresh_token_encrypted FROM token_grants WHERE install_row_id = $1",
      [installRowId],
    );
    expect(row!.access_token_encrypted).toMatch(/^v1\.k2\./);
    expect(row!.refresh_token_encrypted).toMatch(/^v1\.k2\./);

    // With only the new key, the install still works (and refreshes) ...
    const onlyNew = newKeys.split(",")[0]!;
    await expireAccessToken(installRowId, false);
    expect(resultOf<{ ok: number }>(await runAppWorker(["call", installRowId, "1"], { TOKEN_ENCRYPTION_KEYS: onlyNew })).ok).toBe(1);
    // ... and with only the old key, nothing can be read any more.
    const onlyOld = resultOf<{ ok: number; errors: Record<string, number> }>(await runAppWorker(["call", installRowId, "1"], { TOKEN_ENCRYPTION_KEYS: oldKeys }));
    expect(onlyOld.ok).toBe(0);
    expect(Object.keys(onlyOld.errors)).toEqual(["TokenDecryptionError"]);
  });
});

describe("no token in clear text", () => {
  it("the database holds none, in any table", async () => {
    const { installRowId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    await runAppWorker(["call", installRowId, "2"]); // a refresh too
    for (const table of ["installs", "token_grants", "install_events", "webhook_deliveries", "oauth_client_health"]) {
      const rows = await sql(`SELECT * FROM ${table}`);
      expect(JSON.stringify(rows), table).not.toMatch(TOKEN_SHAPED);
    }
  });

  it("no log line of the app, the sandbox or a worker holds one", async () => {
    const { installRowId } = await installViaPortal(1002);
    await expireAccessToken(installRowId, false);
    const worker = await runAppWorker(["call", installRowId, "2"], { LOG_LEVEL: "debug" });
    // Naming the right issuer (RFC 9207), so the forged code is sent and refused by the identity provider.
    await fetch(`${stack.appUrl}/oauth/callback?code=volt_ac_thisIsAForgedCode123&state=abcdefgh12&iss=${encodeURIComponent(process.env.OAUTH_ISSUER!)}`, {
      redirect: "manual",
    });

    const logDir = process.env.TEST_LOG_DIR!;
    const logs = readdirSync(logDir).map((name) => ({ name, text: readFileSync(path.join(logDir, name), "utf8") }));
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.find((l) => l.name === "app.log")?.text.length).toBeGreaterThan(0);
    for (const log of [...logs, { name: "worker stdout", text: worker.stdout + worker.stderr }]) {
      expect(log.text, log.name).not.toMatch(TOKEN_SHAPED);
      expect(log.text, log.name).not.toContain(process.env.OAUTH_CLIENT_SECRET!);
      expect(log.text, log.name).not.toContain(process.env.WEBHOOK_SECRET!);
    }
  });
});
