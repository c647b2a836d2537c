// The token lifecycle (contract §2-§5, §7-§8): rotation without ever losing an install through the
// app's own fault. Several tests run the app's lib/ in separate OS processes (tests/helpers/app-worker.ts)
// to play a second instance, or a process that dies at the worst moment.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker, startAppWorker } from "../helpers/app-process";
import { closeSql, control, expireAccessToken, installViaPortal, resetWorld, sql, stack, tokenCalls } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

type CallSummary = { ok: number; errors: Record<string, number>; latencies: number[] };

beforeEach(resetWorld);
afterAll(closeSql);

async function grantRow(installRowId: string) {
  const [row] = await sql<{ version: number; refresh_started_at: Date | null }>(
    "SELECT version, refresh_started_at FROM token_grants WHERE install_row_id = $1",
    [installRowId],
  );
  return row;
}

/**
 * One successful refresh, after which the app observes that this server (Hydra, by default) revokes the
 * access token a refresh replaced: only then is a working old token proof that a refresh never happened (A186).
 */
async function refreshOnce(installRowId: string): Promise<void> {
  // Due for a refresh (within the app's margin) but not expired, as in production: the replaced token can be looked at.
  await sql("UPDATE token_grants SET access_token_expires_at = now() + interval '1 minute' WHERE install_row_id = $1", [installRowId]);
  expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"]))).toMatchObject({ ok: 1, errors: {} });
}

async function installStatus(installRowId: string) {
  const [row] = await sql<{ status: string }>("SELECT status FROM installs WHERE id = $1", [installRowId]);
  return row!.status;
}

/** Chains the sandbox revoked because a used refresh token (or code) was presented again. */
async function chainRevocations(): Promise<number> {
  return (await control<{ chain_revocations: number }>("GET", "/token-stats")).chain_revocations;
}

describe("refresh single-flight", () => {
  it("200 concurrent calls from two processes at expiry: exactly 1 refresh, 0 revocations, all succeed", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, true);

    const runs = await Promise.all([runAppWorker(["call", installRowId, "100"]), runAppWorker(["call", installRowId, "100"])]);
    const summaries = runs.map((run) => resultOf<CallSummary>(run));
    expect(summaries.map((s) => s.errors)).toEqual([{}, {}]);
    expect(summaries.reduce((n, s) => n + s.ok, 0)).toBe(200);

    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    expect(await chainRevocations()).toBe(0);
    expect((await grantRow(installRowId))?.version).toBe(2);
    expect(await installStatus(installRowId)).toBe("ACTIVE");
  });

  it("a 401 after another instance rotated the grant: re-read, no second refresh", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    const { withAccessToken } = await import("@/lib/oauth/access");
    const { fetchConsumer } = await import("@/lib/partner-api/client");

    // This process reads the token; before it uses it, another instance refreshes (the service
    // then revokes the old access token), so this call gets a 401 with the token it read.
    let calls = 0;
    const consumer = await withAccessToken(installRowId, async (token, call) => {
      calls += 1;
      if (calls === 1) {
        await sql("UPDATE token_grants SET access_token_expires_at = now() - interval '1 minute' WHERE install_row_id = $1", [installRowId]);
        expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(1);
      }
      return fetchConsumer(token, call);
    });

    expect(calls).toBe(2); // the 401, then the retry with the re-read token
    expect(consumer.operatorId).toBe("1001");
    expect((await tokenCalls(installId)).refresh_token).toBe(1); // the other instance's only
    expect(await chainRevocations()).toBe(0);
  });
});

describe("a refresh whose outcome is unknown", () => {
  it("the process dies after the service answered and before the commit: re-install needed, the dead token is never re-sent", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false); // the app refreshes; the old token still works at the service

    const crashed = await runAppWorker(["crash-after-answer", installRowId]);
    expect(crashed.signal).toBe("SIGKILL");
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    const afterCrash = await grantRow(installRowId);
    expect(afterCrash?.refresh_started_at).not.toBeNull(); // the marker survived the crash
    expect(afterCrash?.version).toBe(1); // the new pair was never stored

    // Time passes beyond any in-flight request; then several calls, from another process.
    await sql("UPDATE token_grants SET refresh_started_at = now() - interval '5 minutes' WHERE install_row_id = $1", [installRowId]);
    await sql("UPDATE token_grants SET access_token_expires_at = now() + interval '10 minutes' WHERE install_row_id = $1", [installRowId]);
    const summary = resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"]));
    expect(summary.ok).toBe(0);
    expect(summary.errors).toEqual({ "NoUsableTokenError:reinstall_needed": 3 });
    expect(await installStatus(installRowId)).toBe("REINSTALL_NEEDED");

    // No later path re-sends the dead token, and nothing loops.
    resultOf<CallSummary>(await runAppWorker(["call", installRowId, "5"]));
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    expect(await chainRevocations()).toBe(0);
    const [event] = await sql<{ cause: string; detail: string }>(
      "SELECT cause, detail FROM install_events WHERE install_row_id = $1 AND to_status = 'REINSTALL_NEEDED'",
      [installRowId],
    );
    expect(event).toMatchObject({ cause: "refresh" });
    expect(event!.detail).toMatch(/answer was lost/);
  });

  it("the process dies after committing the marker but before sending: proven unspent, it recovers", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    await refreshOnce(installRowId);
    await expireAccessToken(installRowId, false);
    const crashed = await runAppWorker(["crash-before-send", installRowId]);
    expect(crashed.signal).toBe("SIGKILL");
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    await sql("UPDATE token_grants SET refresh_started_at = now() - interval '5 minutes', access_token_expires_at = now() + interval '1 minute' WHERE install_row_id = $1", [
      installRowId,
    ]);

    const summary = resultOf<CallSummary>(await runAppWorker(["call", installRowId, "2"]));
    expect(summary).toMatchObject({ ok: 2, errors: {} });
    expect((await tokenCalls(installId)).refresh_token).toBe(2);
    expect(await grantRow(installRowId)).toMatchObject({ version: 3, refresh_started_at: null });
    expect(await installStatus(installRowId)).toBe("ACTIVE");
  });
});

describe("the token endpoint fails mid-refresh (sandbox faults)", () => {
  // As if the settle window (HTTP timeout + commit retry + margin) has passed. `probeable`: the old
  // access token is due for a refresh but still within its hour by the app's record, so the next
  // call refreshes and the settle probe can use the old token first.
  const settleNow = (installRowId: string, probeable: boolean) =>
    sql(
      `UPDATE token_grants SET refresh_started_at = now() - interval '5 minutes'${probeable ? ", access_token_expires_at = now() + interval '1 minute'" : ""} WHERE install_row_id = $1`,
      [installRowId],
    );

  it("a 500 that did nothing: the marker stays, the settle probe proves the token unspent, and it recovers", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    await refreshOnce(installRowId);
    await expireAccessToken(installRowId, false);
    await control("POST", "/faults", { tokenEndpoint: { mode: "error500", count: 1 } });
    const failed = resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"]));
    expect(failed.ok).toBe(0);
    expect((await grantRow(installRowId))?.refresh_started_at).not.toBeNull();

    await settleNow(installRowId, true);
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "2"]))).toMatchObject({ ok: 2, errors: {} });
    expect((await tokenCalls(installId)).refresh_token).toBe(3);
    expect(await chainRevocations()).toBe(0);
    expect(await installStatus(installRowId)).toBe("ACTIVE");
  });

  it("an answer lost after the refresh happened: the probe sees the old token revoked, re-install needed, nothing re-sent", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    await control("POST", "/faults", { tokenEndpoint: { mode: "answer-then-fail", count: 1 } });
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(0);
    await settleNow(installRowId, true);
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"])).errors).toEqual({ "NoUsableTokenError:reinstall_needed": 3 });
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    expect(await chainRevocations()).toBe(0);
    expect(await installStatus(installRowId)).toBe("REINSTALL_NEEDED");
  });

  // sandbox decision 55: a server that keeps earlier access tokens valid after a refresh (panva's
  // oidc-provider). The old token still works although the refresh may have happened, so presenting the
  // refresh token again could be a reuse that revokes the grant (A185). The app has not yet seen this
  // server refresh (its first refresh is the lost one), so it cannot know the probe is proof (A186).
  it("at a server that keeps old access tokens valid, a lost answer leaves the install serving: 0 revocations, the operator told to reconnect, one alert", async () => {
    await control("POST", "/idp-behaviour", { oldAccessTokensStayValid: true });
    const { installRowId, installId, sessionCookie } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    await control("POST", "/faults", { tokenEndpoint: { mode: "answer-then-fail", count: 1 } });
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(0);
    await settleNow(installRowId, true);

    // Serving on the old access token; the refresh token is never presented again.
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"]))).toMatchObject({ ok: 3, errors: {} });
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "2"]))).toMatchObject({ ok: 2, errors: {} });
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    expect(await chainRevocations()).toBe(0);
    expect(await installStatus(installRowId)).toBe("ACTIVE");
    // Staff: one alert for the incident, however many calls met it.
    const alertTypes = async () =>
      (await sql<{ type: string }>("SELECT data->'alert'->>'type' AS type FROM pgboss.job WHERE name = 'alert.deliver' ORDER BY created_on")).map((row) => row.type);
    expect(await alertTypes()).toEqual(["install.reconnect_needed"]);

    // The operator: reconnect from the portal before the old access token expires, in plain words.
    const page = async () => (await fetch(`${stack.appUrl}/dashboard`, { headers: { cookie: sessionCookie } })).text();
    const banner = /data-testid="reconnect-needed"[\s\S]*?<\/p>/.exec(await page())?.[0] ?? "";
    expect(banner).toContain("operator portal");
    expect(banner).toContain("It keeps working until");
    expect(banner).not.toMatch(/token|refresh|grant|OAuth|re-install/i);

    // The old access token runs out before the operator reconnected: still nothing re-sent, the page says reconnect.
    await sql("UPDATE token_grants SET access_token_expires_at = now() - interval '1 minute' WHERE install_row_id = $1", [installRowId]);
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "2"])).errors).toEqual({ "NoUsableTokenError:reinstall_needed": 2 });
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    expect(await chainRevocations()).toBe(0);
    expect(await installStatus(installRowId)).toBe("REINSTALL_NEEDED");
    const lostPage = await page();
    expect(/data-testid="install-lost"[\s\S]*?<\/p>/.exec(lostPage)?.[0] ?? "").toContain("Open the app from your operator portal to connect it again");
    expect(/data-testid="install-status"[^>]*>([^<]*)</.exec(lostPage)?.[1]).not.toMatch(/install/i);
    // Still the same incident for staff: the alert already asked for this reconnect.
    expect(await alertTypes()).toEqual(["install.reconnect_needed"]);

    // The one step back: a reconnect from the portal restores the same install.
    const again = await installViaPortal(1001);
    expect(again.installRowId).toBe(installRowId);
    expect(await installStatus(installRowId)).toBe("ACTIVE");
    expect(await alertTypes()).toEqual(["install.reconnect_needed", "install.recovered"]);
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"]))).toMatchObject({ ok: 1, errors: {} });
    expect(await chainRevocations()).toBe(0);
  }, scaled(90_000));

  it("an idle grant (old token expired, nothing to probe): a 500 that did nothing is retried once and the install saved", async () => {
    const { installRowId, installId } = await installViaPortal(1002);
    await expireAccessToken(installRowId, true); // expired at the service too: the probe cannot tell
    await control("POST", "/faults", { tokenEndpoint: { mode: "error500", count: 1 } });
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(0);
    await settleNow(installRowId, false);
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(1);
    expect((await tokenCalls(installId)).refresh_token).toBe(2);
    expect(await installStatus(installRowId)).toBe("ACTIVE");
  });

  it("an idle grant whose refresh did happen: the one retry finds it spent, and the install needs a re-install", async () => {
    const { installRowId, installId } = await installViaPortal(1002);
    await expireAccessToken(installRowId, true);
    await control("POST", "/faults", { tokenEndpoint: { mode: "answer-then-fail", count: 1 } });
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(0);
    await settleNow(installRowId, false);
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).errors).toEqual({ "NoUsableTokenError:reinstall_needed": 1 });
    // Once, never again: the spent token was sent a second time only because nothing could prove it spent.
    resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"]));
    expect((await tokenCalls(installId)).refresh_token).toBe(2);
    expect(await installStatus(installRowId)).toBe("REINSTALL_NEEDED");
    const [event] = await sql<{ detail: string }>("SELECT detail FROM install_events WHERE install_row_id = $1 AND to_status = 'REINSTALL_NEEDED'", [installRowId]);
    expect(event!.detail).toMatch(/^an earlier refresh's answer was lost; the previous access token had expired, so nothing could tell whether the refresh happened; the refresh token was sent once more and refused/);
    // Its kind, not the identity provider's free text (error_description: "The refresh token was already used.").
    expect(event!.detail).toContain("refused (invalid_grant, HTTP 400)");
    expect(event!.detail).not.toContain("already used");
  });
});

describe("uninstall and revocation", () => {
  it("after the install was revoked at the service, a refresh fails once and the app stops", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    const other = await installViaPortal(1002);
    await control("POST", `/installs/${installId}/revoke`);
    await expireAccessToken(installRowId, false);

    const first = resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"]));
    expect(first.ok).toBe(0);
    const status = await installStatus(installRowId);
    expect(["REVOKED", "REINSTALL_NEEDED"]).toContain(status);
    const callsAfterFirst = (await tokenCalls(installId)).refresh_token;
    expect(callsAfterFirst).toBeLessThanOrEqual(1);

    resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"]));
    expect((await tokenCalls(installId)).refresh_token).toBe(callsAfterFirst);
    // The other operator's install is untouched.
    expect(resultOf<CallSummary>(await runAppWorker(["call", other.installRowId, "1"])).ok).toBe(1);
    expect(await installStatus(other.installRowId)).toBe("ACTIVE");
  });
});

describe("keep-alive", () => {
  it("refreshes a 29-day-idle grant exactly once with two runs at once", async () => {
    const { installRowId, installId } = await installViaPortal(1003);
    // 29 days idle: the service's clock moves on, and the app's grant is a day from expiry.
    await control("POST", "/clock/advance", { seconds: 29 * 24 * 3600 });
    await sql(
      "UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day', access_token_expires_at = now() - interval '28 days' WHERE install_row_id = $1",
      [installRowId],
    );

    // Two processes each fan out and work the queue. The install's job is keyed by it, so they never
    // run at once; if the second fan-out comes after the first job was taken, a second job runs after
    // it, finds the grant fresh, and does nothing (jobs are safe to run twice).
    const runs = await Promise.all([runAppWorker(["keep-alive"]), runAppWorker(["keep-alive"])]);
    const results = runs.map((run) => resultOf<{ enqueued: number; outcomes: Record<string, number> }>(run));
    const outcomes = results.flatMap((r) => Object.entries(r.outcomes).flatMap(([outcome, n]) => Array<string>(n).fill(outcome))).sort();
    expect(outcomes.filter((outcome) => outcome === "refreshed")).toEqual(["refreshed"]);
    expect(outcomes.filter((outcome) => outcome !== "refreshed")).toEqual(Array(outcomes.length - 1).fill("not_due"));
    expect(results.reduce((n, r) => n + r.enqueued, 0)).toBeGreaterThanOrEqual(1);
    expect((await tokenCalls(installId)).refresh_token).toBe(1);

    // And the next run finds nothing due.
    // (A second job the other run left queued may run now: it finds the grant fresh.)
    const again = resultOf<{ due: number; outcomes: Record<string, number> }>(await runAppWorker(["keep-alive"]));
    expect(again).toMatchObject({ due: 0, enqueued: 0 });
    expect(again.outcomes.refreshed).toBeUndefined();
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    const [grant] = await sql<{ refresh_token_expires_at: Date }>("SELECT refresh_token_expires_at FROM token_grants WHERE install_row_id = $1", [installRowId]);
    expect(grant!.refresh_token_expires_at.getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 3600 * 1000);
  });
});

describe("invalid_client", () => {
  it("opens the circuit: no further token requests until the configuration changes", async () => {
    const { installRowId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    const wrongSecret = { OAUTH_CLIENT_SECRET: "not-the-registered-secret" };

    const first = resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"], wrongSecret));
    expect(first.errors).toEqual({ "TokenCircuitOpenError": 1 });
    const [health] = await sql<{ circuit_open: boolean }>("SELECT circuit_open FROM oauth_client_health");
    expect(health?.circuit_open).toBe(true);
    // (The identity provider refused the client before looking at the token: no install on the call.)
    expect((await tokenCalls()).refresh_token).toBe(1);

    resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"], wrongSecret));
    expect((await tokenCalls()).refresh_token).toBe(1); // paused: nothing sent

    // The configuration changes (the right secret): the circuit closes and refreshing resumes.
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(1);
    expect((await sql<{ circuit_open: boolean }>("SELECT circuit_open FROM oauth_client_health"))[0]?.circuit_open).toBe(false);
    expect(await installStatus(installRowId)).toBe("ACTIVE");
  });
});

describe("the database goes away during a refresh", () => {
  it("keeps the new pair until the database is back, then stores it: no token lost", async () => {
    const { startTcpProxy } = await import("../helpers/tcp-proxy");
    const { installRowId, installId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    const proxy = await startTcpProxy(new URL(process.env.DATABASE_URL!));
    try {
      const worker = startAppWorker(["pause-after-answer", installRowId], { DATABASE_URL: proxy.url });
      await new Promise<void>((resolve) => worker.child.stdout!.on("data", (chunk: string) => chunk.includes("PAUSED") && resolve()));
      proxy.cut(); // the database is gone when the refresh answer arrives
      worker.child.stdin!.write("go\n");
      await new Promise((r) => setTimeout(r, 2_000));
      proxy.restore();
      const run = await worker.done;
      expect(resultOf<{ ok: number }>(run)).toEqual({ ok: 1 });
    } finally {
      await proxy.close();
    }
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
    expect(await grantRow(installRowId)).toMatchObject({ version: 2, refresh_started_at: null });
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(1);
    expect((await tokenCalls(installId)).refresh_token).toBe(1);
  });
});
