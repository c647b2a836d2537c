// POST /_sandbox/bulk-installs (README decision 41): many operators, each with an active install and a real token
// pair, in one call. The tokens work at the API and at the token endpoint exactly as redeemed ones do.
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { MAX_BULK_OPERATORS } from "../../sandbox/seed.js";
import { callApi, control, controlRaw, events, receivedEnvelopes, refreshTokens, resetSandbox, setUpTestSandbox, tokenStats } from "./helpers.js";

type BulkInstall = { operatorId: number; installId: number; access_token: string; refresh_token: string; token_type: string; expires_in: number; scope: string };
type BulkAnswer = { count: number; installs: BulkInstall[]; webhooks: { sent: number; delivered: number; failed: number } | null };

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env, { webhooks: true }));

describe("POST /_sandbox/bulk-installs", () => {
  it("creates 10,000 operators with active installs and token pairs in one call", async () => {
    const answer = await control<BulkAnswer>(env, "POST", "/bulk-installs", { count: 10_000 });
    expect(answer.count).toBe(10_000);
    expect(answer.webhooks).toBeNull();
    expect(answer.installs[0]).toEqual({
      operatorId: 100_001,
      installId: 1,
      access_token: expect.stringMatching(/^volt_at_/),
      refresh_token: expect.stringMatching(/^volt_rt_/),
      token_type: "bearer",
      expires_in: 3599,
      scope: "charge-points:read charge-transactions:read offline_access",
    });
    expect(answer.installs.at(-1)).toMatchObject({ operatorId: 110_000, installId: 10_000 });
    expect(new Set(answer.installs.map((i) => i.access_token)).size).toBe(10_000);
    const { installs } = await control<{ installs: { install_id: number; status: string; consumer_status: string; slug: string }[] }>(env, "GET", "/installs");
    expect(installs).toHaveLength(10_000);
    expect(installs.every((i) => i.status === "active" && i.consumer_status === "active")).toBe(true);
    expect(installs[41]?.slug).toBe("bulk-operator-42");
    // One event for the batch, not 10,000 that would push everything else out of the log; no webhook by default.
    expect((await events(env, "?type=install")).map((e) => e.detail)).toEqual([
      expect.objectContaining({ action: "bulk_created", count: 10_000, first_install_id: 1, last_install_id: 10_000 }),
    ]);
    expect(env.webhooks.received).toHaveLength(0);

    // The tokens are real: the API resolves them to their operator, the token endpoint rotates them.
    const last = answer.installs.at(-1)!;
    const me = (await (await callApi(env, "/consumers/me", last.access_token)).json()) as { operatorId: number; installId: number };
    expect(me).toMatchObject({ operatorId: 110_000, installId: 10_000 });
    const points = (await (await callApi(env, "/charge-points", last.access_token)).json()) as { data: { id: number }[]; meta: { totalItemCount: number } };
    expect(points.meta.totalItemCount).toBe(3);
    const refreshed = await refreshTokens(env, answer.installs[7]!.refresh_token);
    expect(refreshed.status).toBe(200);
    const pair = (await refreshed.json()) as { access_token: string };
    expect((await callApi(env, "/charges", pair.access_token)).status).toBe(200);
    expect((await callApi(env, "/charges", answer.installs[7]!.access_token)).status).toBe(401); // the refresh revoked it
    expect(await tokenStats(env, 8)).toMatchObject({ refreshes_issued: 1, chain_revocations: 0, chain_revoked: false, active_access_tokens: 1 });
    // A used refresh token presented again revokes the chain, as for any install.
    expect((await refreshTokens(env, answer.installs[7]!.refresh_token)).status).toBe(400);
    expect(await tokenStats(env, 8)).toMatchObject({ chain_revocations: 1, chain_revoked: true });
  }, 60_000);

  it("takes scopes (a subset of the app's), a charge count, and sends install.created when asked", async () => {
    const answer = await control<BulkAnswer>(env, "POST", "/bulk-installs", { count: 5, scopes: ["charge-transactions:read"], charges: 40, webhooks: true });
    expect(answer.webhooks).toEqual({ sent: 5, delivered: 5, failed: 0 });
    expect(answer.installs.map((i) => i.scope)).toEqual(Array(5).fill("charge-transactions:read offline_access"));
    const envelopes = receivedEnvelopes(env);
    expect(envelopes.map((e) => e.type)).toEqual(Array(5).fill("install.created"));
    expect(envelopes.map((e) => e.data.install_id).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(envelopes.find((e) => e.data.install_id === 3)?.data).toEqual({ install_id: 3, operator_id: 100_003, slug: "bulk-operator-3" });
    const token = answer.installs[2]!.access_token;
    const charges = (await (await callApi(env, "/charges?perPage=100", token)).json()) as { data: { id: number }[]; meta: { totalItemCount: number } };
    expect(charges.meta.totalItemCount).toBe(40);
    expect((await callApi(env, "/charge-points", token)).status).toBe(403); // not granted
    // A second call numbers on; the first batch keeps its charge count.
    const more = await control<BulkAnswer>(env, "POST", "/bulk-installs", { count: 2, charges: 0 });
    expect(more.installs.map((i) => [i.operatorId, i.installId])).toEqual([
      [100_006, 6],
      [100_007, 7],
    ]);
    const { operators } = await control<{ operators: { id: number; chargeCount: number }[] }>(env, "GET", "/operators");
    expect(operators.filter((o) => o.id > 100_000).map((o) => o.chargeCount)).toEqual([40, 40, 40, 40, 40, 0, 0]);
    // The portal does not list thousands of them, but each has its catalogue page.
    expect(await (await fetch(`${env.url}/portal`)).text()).toContain("and 7 operator(s) created through the control API");
    expect((await fetch(`${env.url}/portal/operators/100007`)).status).toBe(200);
  });

  it.each([
    [{ count: 0 }, /count: Too small/],
    [{ count: 20_001 }, /count: Too big/],
    [{ count: "10" }, /count: Invalid input/],
    [{}, /Expected \{"count": 1-20000/],
    [{ count: 1, extra: true }, /Unrecognized key/],
    [{ count: 1, charges: 1001 }, /charges: Too big/],
    [{ count: 1, scopes: ["Bad Scope"] }, /each scope must look like/],
    [{ count: 1, scopes: ["teams:read"] }, /scopes the app does not request \(POST \/_sandbox\/app\/scopes first\): teams:read/],
  ])("answers %j with 400 and a clear message, creating nothing", async (body, message) => {
    const response = await controlRaw(env, "POST", "/bulk-installs", body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(message);
    expect((await control<{ installs: unknown[] }>(env, "GET", "/installs")).installs).toEqual([]);
  });

  it("a web page cannot make the sandbox mint tokens for it: a cross-site request is refused before anything is created", async () => {
    for (const headers of [{ Origin: "https://attacker.example" }, { "Sec-Fetch-Site": "cross-site" }] as Record<string, string>[]) {
      const response = await fetch(`${env.url}/_sandbox/bulk-installs`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ count: 3 }),
      });
      expect(response.status).toBe(403);
      expect(await response.text()).not.toMatch(/volt_(at|rt)_/);
    }
    expect((await control<{ installs: unknown[] }>(env, "GET", "/installs")).installs).toEqual([]);
  });

  it("never writes the tokens it hands out to its log or its files: only their sha256", async () => {
    const { installs } = await control<BulkAnswer>(env, "POST", "/bulk-installs", { count: 50 });
    await control(env, "GET", "/persistence?flush=1");
    const files = await Promise.all(["state.json", "journal.jsonl"].map((name) => readFile(path.join(env.config.dataDir, name), "utf8")));
    const stored = files.join("\n") + env.logs.join("\n");
    expect(stored).not.toMatch(/volt_(at|rt)_/);
    for (const install of installs.slice(0, 5)) expect(stored).toContain(createHash("sha256").update(install.access_token).digest("hex"));
    for (const name of ["state.json", "journal.jsonl"]) expect((await stat(path.join(env.config.dataDir, name))).mode & 0o777).toBe(0o600);
  });

  it(`refuses to go past ${MAX_BULK_OPERATORS.toLocaleString("en")} bulk operators in all`, async () => {
    env.running.sandbox.ctx.store.state.bulkOperators = { count: MAX_BULK_OPERATORS - 1, batches: [{ first: 1, count: MAX_BULK_OPERATORS - 1, charges: 0 }] };
    const response = await controlRaw(env, "POST", "/bulk-installs", { count: 2 });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/at most 100,000 bulk operators in all; 99999 exist/);
  });
});
