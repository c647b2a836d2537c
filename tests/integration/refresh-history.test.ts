// The refresh history (lib/oauth/refresh-history.ts): every attempt of the refresh coordinator leaves a
// row (outcome, duration, which process), the refused and the unknown ones too, never a token; a day's
// routine successes in a row fold into one row that counts them; the console's install timeline shows
// them, successes in a row folded into one line; and a history that cannot be written never fails a
// refresh.
import { hostname } from "node:os";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";
import { closeSql, control, expireAccessToken, installViaPortal, knowIssuer, resetWorld, sql, stack } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

type CallSummary = { ok: number; errors: Record<string, number> };
type AttemptRow = { id: string; install_row_id: string; attempted_at: Date; duration_ms: number; outcome: string; detail: string | null; host: string; pid: number };

/** A token of any brand (contract §2: `<brand>_at_/_rt_/_ac_`). */
const TOKEN_SHAPED = /\b[a-z][a-z0-9]*_(?:at|rt|ac)_[A-Za-z0-9._~-]{8,}/;

beforeEach(resetWorld);
afterEach(async () => {
  // The write-failure test renames the table; put it back even when that test fails.
  await sql("ALTER TABLE IF EXISTS refresh_attempts_away RENAME TO refresh_attempts");
});
afterAll(closeSql);

const attempts = (installRowId: string) =>
  sql<AttemptRow>("SELECT id::text, install_row_id::text, attempted_at, duration_ms, outcome, detail, host, pid FROM refresh_attempts WHERE install_row_id = $1 ORDER BY attempted_at, id", [installRowId]);
const call = async (installRowId: string, n: number) => resultOf<CallSummary>(await runAppWorker(["call", installRowId, String(n)]));

/** As if the settle window of an unknown refresh had passed, with the old access token still probeable (token-lifecycle.test.ts). */
const settleNow = (installRowId: string) =>
  sql("UPDATE token_grants SET refresh_started_at = now() - interval '5 minutes', access_token_expires_at = now() + interval '1 minute' WHERE install_row_id = $1", [installRowId]);

async function timelineOf(installRowId: string): Promise<{ kind: string; text: string }[]> {
  const signIn = await signInStaffWithFetch(process.env.STAFF_DEV_EMAIL ?? "", process.env.STAFF_DEV_PASSWORD ?? "");
  const html = (await (await fetch(`${stack.appUrl}/admin/installs/${installRowId}`, { headers: { cookie: signIn.sessionCookie! } })).text()).replaceAll("<!-- -->", "");
  const list = /data-testid="timeline">([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? "";
  return [...list.matchAll(/<li[^>]*data-kind="([a-z]+)"[^>]*>([\s\S]*?)<\/li>/g)].map((m) => ({ kind: m[1]!, text: m[2]!.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim() }));
}

describe("the refresh history", () => {
  it("one row per attempt, whatever its outcome (refreshed, unknown, settling, refused), with duration and process, never a token; the timeline shows them", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    // The sandbox revokes a replaced access token, as Hydra does, and the app knows it: a working old token proves a lost refresh never happened.
    await knowIssuer();

    // Three callers at once share one refresh: one row.
    await expireAccessToken(installRowId, false);
    expect((await call(installRowId, 3)).ok).toBe(3);
    // A 500 from the token endpoint: sent, outcome unknown (the marker stays).
    await expireAccessToken(installRowId, false);
    await control("POST", "/faults", { tokenEndpoint: { mode: "error500", count: 1 } });
    expect((await call(installRowId, 1)).ok).toBe(0);
    // At once again: the earlier attempt is still settling, nothing is sent.
    expect((await call(installRowId, 1)).ok).toBe(0);
    // Later: the old token still works, so the refresh token is sent once more, and it succeeds.
    await settleNow(installRowId);
    expect((await call(installRowId, 1)).ok).toBe(1);
    // The operator uninstalls and the app never hears of it (install.revoked lost): the next refresh is refused.
    await control("POST", "/webhook-modes", { type: "install.revoked", mode: "drop", count: 1 });
    await control("POST", `/installs/${installId}/revoke`);
    await expireAccessToken(installRowId, false);
    expect((await call(installRowId, 1)).errors).toEqual({ "NoUsableTokenError:reinstall_needed": 1 });

    const rows = await attempts(installRowId);
    expect(rows.map((row) => [row.outcome, row.detail])).toEqual([
      ["refreshed", null],
      ["unknown", "unavailable HTTP 500"],
      ["settling", "an earlier refresh is still settling; nothing was sent"],
      ["refreshed", "sent once more after an earlier answer was lost (probe_alive)"],
      ["refused", "invalid_grant"],
    ]);
    for (const row of rows) {
      // Another process (the worker) made each attempt, on this machine.
      expect(row.host).toBe(hostname());
      expect(row.pid).not.toBe(process.pid);
      expect(row.duration_ms).toBeGreaterThanOrEqual(0);
      expect(row.duration_ms).toBeLessThan(30_000);
      expect(JSON.stringify(row)).not.toMatch(TOKEN_SHAPED);
    }
    expect(new Set(rows.map((row) => row.pid)).size).toBe(rows.length); // one worker process per call

    const tokens = (await timelineOf(installRowId)).filter((entry) => entry.kind === "tokens").map((entry) => entry.text);
    expect(tokens).toEqual([
      expect.stringContaining("Refresh refused by the identity provider"),
      expect.stringContaining("Tokens refreshed"),
      expect.stringContaining("Refresh waited: an earlier one is being settled"),
      expect.stringContaining("Refresh outcome unknown"),
      expect.stringContaining("Tokens refreshed"),
    ]);
    expect(tokens[3]).toContain(`unavailable HTTP 500; `);
    expect(tokens[3]).toContain(`by ${hostname()} (pid ${rows[1]!.pid})`);
  }, scaled(90_000));

  it("a day's routine successes in a row fold into one row that counts them; a failure, a success with something to say, or a day's gap starts a new row", async () => {
    const { installRowId } = await installViaPortal(1004);
    await knowIssuer();
    const refreshOnce = async () => {
      await expireAccessToken(installRowId, false);
      expect((await call(installRowId, 1)).ok).toBe(1);
    };
    const folded = async () =>
      (await sql<{ outcome: string; detail: string | null; attempts: number; spread: boolean }>(
        "SELECT outcome, detail, attempts, last_attempted_at > attempted_at AS spread FROM refresh_attempts WHERE install_row_id = $1 ORDER BY attempted_at, id",
        [installRowId],
      )).map((row) => [row.outcome, row.detail, row.attempts, row.spread]);

    await refreshOnce();
    await refreshOnce();
    await refreshOnce();
    expect(await folded()).toEqual([["refreshed", null, 3, true]]);

    // A lost answer, then the refresh sent once more: each its own row, as before.
    await expireAccessToken(installRowId, false);
    await control("POST", "/faults", { tokenEndpoint: { mode: "error500", count: 1 } });
    expect((await call(installRowId, 1)).ok).toBe(0);
    await settleNow(installRowId);
    expect((await call(installRowId, 1)).ok).toBe(1);
    // The next routine success follows one that had something to say: a new row; the one after folds into it.
    await refreshOnce();
    await refreshOnce();
    expect(await folded()).toEqual([
      ["refreshed", null, 3, true],
      ["unknown", "unavailable HTTP 500", 1, null],
      ["refreshed", "sent once more after an earlier answer was lost (probe_alive)", 1, null],
      ["refreshed", null, 2, true],
    ]);

    // A row begun more than a day ago takes no more: the purge's window counts from a row's first attempt.
    await sql("UPDATE refresh_attempts SET attempted_at = attempted_at - interval '25 hours', last_attempted_at = last_attempted_at - interval '25 hours' WHERE install_row_id = $1", [installRowId]);
    await refreshOnce();
    expect((await folded()).at(-1)).toEqual(["refreshed", null, 1, null]);

    // The timeline counts the folded attempts: 1 + 2 successes in a row, then the success sent once more.
    const tokens = (await timelineOf(installRowId)).filter((entry) => entry.kind === "tokens").map((entry) => entry.text);
    expect(tokens.slice(0, 3)).toEqual([
      expect.stringContaining("Tokens refreshed: 4 attempts in a row went well"),
      expect.stringContaining("Refresh outcome unknown"),
      expect.stringContaining("Tokens refreshed: 3 attempts in a row went well"),
    ]);
  }, scaled(120_000));

  it("folds successes in a row into one timeline line, and keeps each failure on its own", async () => {
    const { installRowId } = await installViaPortal(1002);
    // A month of hourly refreshes, then one refused: written as the coordinator writes them.
    await sql(
      `INSERT INTO refresh_attempts (install_row_id, attempted_at, duration_ms, outcome, detail, host, pid)
       SELECT $1, now() - make_interval(hours => 50 - n), 40, CASE WHEN n = 25 THEN 'unknown' ELSE 'refreshed' END, CASE WHEN n = 25 THEN 'unavailable HTTP 503' END, 'app-1', 7
       FROM generate_series(1, 48) AS n`,
      [installRowId],
    );
    await sql("INSERT INTO refresh_attempts (install_row_id, attempted_at, duration_ms, outcome, detail, host, pid) VALUES ($1, now(), 35, 'refused', 'invalid_grant', 'app-2', 9)", [installRowId]);

    const tokens = (await timelineOf(installRowId)).filter((entry) => entry.kind === "tokens").map((entry) => entry.text);
    expect(tokens).toEqual([
      expect.stringContaining("Refresh refused by the identity provider"),
      expect.stringContaining("Tokens refreshed: 23 attempts in a row went well"),
      expect.stringContaining("Refresh outcome unknown"),
      expect.stringContaining("Tokens refreshed: 24 attempts in a row went well"),
    ]);
    expect(tokens[0]).toContain("invalid_grant; 35 ms, by app-2 (pid 9)");
  });

  it("a history that cannot be written does not fail the refresh", async () => {
    const { installRowId } = await installViaPortal(1003);
    await expireAccessToken(installRowId, false);
    await sql("ALTER TABLE refresh_attempts RENAME TO refresh_attempts_away");
    const run = await runAppWorker(["call", installRowId, "2"]);
    expect(resultOf<CallSummary>(run)).toMatchObject({ ok: 2, errors: {} });
    expect(run.stdout).toContain("the refresh history could not be written; the refresh itself is not affected");
    await sql("ALTER TABLE refresh_attempts_away RENAME TO refresh_attempts");
    const [grant] = await sql<{ version: number; refresh_started_at: Date | null }>("SELECT version, refresh_started_at FROM token_grants WHERE install_row_id = $1", [installRowId]);
    expect(grant).toEqual({ version: 2, refresh_started_at: null });
    expect(await attempts(installRowId)).toEqual([]);
  });
});
