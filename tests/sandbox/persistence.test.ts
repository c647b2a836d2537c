// State survives a restart; the state file never holds a token, code or secret in clear.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createSandbox } from "../../sandbox/server.js";
import { CLIENT_SECRET, advanceClock, callApi, connectAndApprove, control, installAndRedeem, refreshTokens, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox();

describe("persistence", () => {
  it("keeps installs, tokens, the clock offset and the event log across a restart", async () => {
    const tokens = await installAndRedeem(env, 1001);
    const pendingCode = (await connectAndApprove(env, 1002)).code;
    await advanceClock(env, 120);
    const eventsBefore = (await control<{ events: unknown[] }>(env, "GET", "/events")).events.length;

    await env.restart();

    expect((await control<{ offsetSeconds: number }>(env, "GET", "/clock")).offsetSeconds).toBe(120);
    const { installs } = await control<{ installs: { install_id: number; status: string }[] }>(env, "GET", "/installs");
    expect(installs.map((i) => [i.install_id, i.status])).toEqual([
      [1, "active"],
      [2, "active"],
    ]);
    expect((await callApi(env, "/consumers/me", tokens.access_token)).status).toBe(200);
    expect((await refreshTokens(env, tokens.refresh_token)).status).toBe(200);
    expect((await control<{ events: unknown[] }>(env, "GET", "/events")).events.length).toBeGreaterThanOrEqual(eventsBefore);
    expect(pendingCode).toMatch(/^volt_ac_/);

    const file = await readFile(path.join(env.config.dataDir, "state.json"), "utf8");
    for (const secret of [tokens.access_token, tokens.refresh_token, pendingCode, CLIENT_SECRET]) expect(file).not.toContain(secret);
    expect(file).not.toMatch(/volt_(at|rt|ac)_/);
  });

  it("reset wipes installs, tokens and logs and sets the clock back", async () => {
    const tokens = await installAndRedeem(env, 1003);
    await control(env, "POST", "/reset");
    expect((await control<{ installs: unknown[] }>(env, "GET", "/installs")).installs).toEqual([]);
    expect((await control<{ offsetSeconds: number }>(env, "GET", "/clock")).offsetSeconds).toBe(0);
    const { events } = await control<{ events: { type: string }[] }>(env, "GET", "/events");
    expect(events.map((e) => e.type)).toEqual(["control"]);
    expect((await callApi(env, "/consumers/me", tokens.access_token)).status).toBe(401);
    // A fresh install starts numbering again after a reset.
    await installAndRedeem(env, 1001);
    expect((await control<{ installs: { install_id: number }[] }>(env, "GET", "/installs")).installs[0]?.install_id).toBe(1);
  });
});

describe("state files written before the token-stats, faults, webhook and scope features", () => {
  it("still load: the new fields take their defaults", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "volt-sandbox-old-state-"));
    try {
      const old = {
        version: 1,
        clockOffsetSeconds: 0,
        nextInstallId: 2,
        nextEventSeq: 1,
        installs: [
          {
            installId: 1,
            operatorId: 1001,
            clientId: "test-partner-app",
            slug: "northwind-charging",
            status: "active",
            scopes: ["charge-points:read", "offline_access"],
            consumerId: "cons_x",
            needsReauth: false,
            createdAt: "2026-01-01T00:00:00.000Z",
            updatedAt: null,
            revokedAt: null,
          },
        ],
        consumers: [],
        tokens: {},
        codes: {},
        authTickets: {},
        consentRequests: {},
        events: [],
      };
      await writeFile(path.join(dataDir, "state.json"), JSON.stringify(old));
      const sandbox = await createSandbox({ ...env.config, dataDir }, { log: () => {} });
      const state = sandbox.ctx.store.state;
      expect(state.installs[0]).toMatchObject({ installId: 1, needsReauthSince: null, config: null });
      expect(state.app).toEqual({ requestedScopes: null, scopesChangedAt: null, clientSecretHash: null, clientSecretRotatedAt: null, clientRemoved: false });
      expect([state.chains, state.tokenStats, state.deliveries, state.deletedTokenInstalls, state.unattributedTokenCalls]).toEqual([{}, {}, [], {}, 0]);
      const installs = (await (await sandbox.app.request("/_sandbox/installs")).json()) as { installs: { config: unknown }[] };
      expect(installs.installs[0]?.config).toEqual({ siteIds: [], syncCharges: true, currency: "EUR" });
      await sandbox.flush();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
