// State survives a restart; the state file never holds a token, code or secret in clear.
import { appendFile, cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createSandbox } from "../../sandbox/server.js";
import { liveChargeCount } from "../../sandbox/live.js";
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

// The snapshot + journal (README decision 42): a change writes that change, not the whole state.
describe("the journal", () => {
  type Persistence = { snapshotBytes: number; journalBytes: number; generation: number; bytesWritten: number; journalAppends: number; compactions: number };
  type BulkAnswer = { installs: { installId: number; access_token: string; refresh_token: string }[] };
  const persistence = (flush = true) => control<Persistence>(env, "GET", `/persistence${flush ? "?flush=1" : ""}`);

  /** A copy of the data folder as it is now, as a crash would leave it (no shutdown compaction). */
  async function crashCopy(): Promise<string> {
    await persistence();
    const copy = await mkdtemp(path.join(tmpdir(), "volt-sandbox-crash-"));
    await cp(env.config.dataDir, copy, { recursive: true });
    return copy;
  }

  /** The state a sandbox starting on `dataDir` has (as plain data; the generation aside, it moves with every snapshot). */
  async function stateIn(dataDir: string): Promise<unknown> {
    const sandbox = await createSandbox({ ...env.config, dataDir }, { log: () => {} });
    const state: unknown = JSON.parse(JSON.stringify({ ...sandbox.ctx.store.state, journalGeneration: 0 }));
    await sandbox.close();
    return state;
  }

  const currentState = (): unknown => JSON.parse(JSON.stringify({ ...env.running.sandbox.ctx.store.state, journalGeneration: 0 }));

  it("after 10,000 bulk installs, one more change writes a small journal line, not the state", async () => {
    await control(env, "POST", "/reset");
    const { installs } = await control<BulkAnswer>(env, "POST", "/bulk-installs", { count: 10_000 });
    const before = await persistence();
    expect(before.snapshotBytes).toBeGreaterThan(5_000_000); // what every change used to rewrite

    expect((await refreshTokens(env, installs[4_321]!.refresh_token)).status).toBe(200);
    const after = await persistence();
    const written = after.bytesWritten - before.bytesWritten;
    expect(after.compactions).toBe(before.compactions);
    expect(after.snapshotBytes).toBe(before.snapshotBytes);
    expect(after.journalAppends).toBeGreaterThan(before.journalAppends);
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(8 * 1024);
    expect(after.journalBytes - before.journalBytes).toBe(written);
  }, 60_000);

  it("a crash loses nothing that was saved: the snapshot and the journal replay to exactly the same state", async () => {
    await control(env, "POST", "/reset");
    const { installs } = await control<BulkAnswer>(env, "POST", "/bulk-installs", { count: 300, charges: 5 });
    const tokens = await installAndRedeem(env, 1001);
    await refreshTokens(env, installs[10]!.refresh_token);
    await control(env, "POST", "/installs/2/revoke");
    await control(env, "PATCH", "/operators/1001/teams/100101", { name: "Renamed" });
    await control(env, "DELETE", "/operators/100005/charges/1100005001");
    await control(env, "POST", "/live-data", { enabled: true, chargesPerHour: 4 });
    await advanceClock(env, 7200);
    await callApi(env, "/charges", tokens.access_token);
    const copy = await crashCopy();
    try {
      expect((await persistence(false)).journalAppends).toBeGreaterThan(0); // the copy holds a journal, not just a snapshot
      expect(await stateIn(copy)).toEqual(currentState());
      const restored = await createSandbox({ ...env.config, dataDir: copy }, { log: () => {} });
      try {
        expect(restored.ctx.operators.find(1001)?.charges).toEqual(env.running.sandbox.ctx.operators.find(1001)?.charges);
        // One deleted, two hours of new ones (as many as the day's shape gives those hours, sandbox decision 59).
        const live = restored.ctx.operators.liveSetting();
        expect(restored.ctx.operators.find(100_005)?.charges).toHaveLength(5 - 1 + liveChargeCount(100_005, live, 2));
      } finally {
        await restored.close();
      }
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it("a journal line cut short by a crash is ignored, and saving goes on after it", async () => {
    await control(env, "POST", "/reset");
    await control(env, "POST", "/bulk-installs", { count: 3 });
    const copy = await crashCopy();
    const saved = currentState();
    try {
      await appendFile(path.join(copy, "journal.jsonl"), '{"ops":[{"op":"put","c":"installs","k":"3","v":{"installId":4,');
      const logs: string[] = [];
      const reopened = await createSandbox({ ...env.config, dataDir: copy }, { log: (line) => logs.push(line) });
      expect(JSON.parse(JSON.stringify({ ...reopened.ctx.store.state, journalGeneration: 0 }))).toEqual(saved);
      expect(logs.join("\n")).toMatch(/journal ended with an incomplete save/);
      // A change after the torn line is not lost behind it.
      reopened.ctx.store.state.nextInstallId = 77;
      reopened.ctx.store.changed();
      await reopened.flush();
      expect(await stateIn(copy)).toMatchObject({ nextInstallId: 77 });
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it("a journal older than the snapshot (a crash between the two writes of a compaction) is ignored, not replayed twice", async () => {
    await control(env, "POST", "/reset");
    await control(env, "POST", "/bulk-installs", { count: 3 });
    await installAndRedeem(env, 1002);
    const copy = await crashCopy();
    try {
      // The snapshot of the next generation is written; the journal of the old one is still there.
      await env.running.sandbox.close();
      await cp(path.join(env.config.dataDir, "state.json"), path.join(copy, "state.json"));
      expect(await stateIn(copy)).toEqual(currentState());
    } finally {
      await rm(copy, { recursive: true, force: true });
      await env.restart();
    }
  });

  it("keeps only what changed: the operators' records are derived, never stored", async () => {
    await control(env, "POST", "/reset");
    await control(env, "POST", "/bulk-installs", { count: 1000, charges: 100 });
    await control(env, "GET", "/operators/2001/charges");
    await control(env, "POST", "/live-data", { enabled: true });
    await advanceClock(env, 10 * 3600);
    await env.restart();
    const snapshot = await readFile(path.join(env.config.dataDir, "state.json"), "utf8");
    expect(snapshot).not.toMatch(/evseId|chargePointId|consumedKwh/);
    expect(JSON.parse(snapshot).bulkOperators).toEqual({ count: 1000, batches: [{ first: 1, count: 1000, charges: 100 }] });
    const { anchor } = await control<{ anchor: string }>(env, "GET", "/live-data");
    expect((await control<{ total: number }>(env, "GET", "/operators/100500/charges")).total).toBe(
      100 + liveChargeCount(100_500, { enabled: true, chargesPerHour: 2, anchorMs: Date.parse(anchor) }, 10),
    );
  });
});
