// Alerts that do not storm (lib/alerts/digest.ts, docs/operations.md "Alerts", register A117): when many
// installs enter the same trouble at once, the first ALERT_DIGEST_THRESHOLD are alerted on their own,
// then one digest stands for the rest; their recoveries are folded likewise into one recovery digest.
// Each install's own incident still opens and closes (the console's state); only the notifications fold.
//
// The 5,000-install test drives the state changes through the app's own functions in this process
// (alertOnSyncOutcome: what a sync run reports when the identity provider is down, reason
// token_refresh_unavailable), sixteen at a time, as many workers would. The real path (real refreshes
// refused by an identity provider that is down, real sync runs failing, in another process) is shown at
// small scale by the second test.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { bulkInstalls, closeSql, control, receivedAlerts, resetWorld, sql, storeBulkInstalls } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

beforeEach(resetWorld);
afterAll(async () => {
  const { stopJobEngine } = await import("@/lib/jobs/enqueue");
  await stopJobEngine(1_000);
  await closeSql();
});

type DeliverySummary = { delivered: number; failed: number; more: boolean };
type Job = { type: string; incident: string; details: Record<string, string | number | null> };

const alertJobs = async () =>
  (await sql<{ data: { alert: Job } }>("SELECT data FROM pgboss.job WHERE name = 'alert.deliver' ORDER BY created_on, id")).map((row) => row.data.alert);
const countByType = (alerts: { type: string }[]) => alerts.reduce<Record<string, number>>((counts, alert) => ({ ...counts, [alert.type]: (counts[alert.type] ?? 0) + 1 }), {});

/** `count` ACTIVE installs straight into the app's database (the state changes below need only the rows). */
async function storeInstalls(count: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    `INSERT INTO installs (id, install_id, client_id, operator_id, operator_name, granted_scopes, status, updated_at)
     SELECT gen_random_uuid(), 500000 + n, $2, (900000 + n)::text, 'Operator ' || n, ARRAY['charge-points:read'], 'ACTIVE', now()
     FROM generate_series(1, $1::int) AS n RETURNING id::text`,
    [count, process.env.OAUTH_CLIENT_ID],
  );
  return rows.map((row) => row.id);
}

/** Runs `work` for every item, `parallel` at a time: many workers reporting at once. */
async function inParallel<T>(items: T[], parallel: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

describe("a storm of per-install alerts", () => {
  it("an identity provider outage for 5,000 installs at once: one digest alert and one recovery digest, not 5,000 of each", async () => {
    const { alertOnSyncOutcome } = await import("@/lib/alerts/incidents");
    const { env } = await import("@/lib/env");
    const { ALERT_DIGEST_THRESHOLD: threshold, ALERT_SYNC_FAILURES: failures } = env();
    expect(threshold).toBe(20); // the defaults: 20 installs, within 10 minutes
    const installs = await storeInstalls(5_000);

    // Every install's sync fails ALERT_SYNC_FAILURES times in a row: the refresh cannot reach the identity provider.
    for (let run = 0; run < failures; run += 1) {
      await inParallel(installs, 16, (id) => alertOnSyncOutcome(id, "failed", "token_refresh_unavailable"));
    }
    // Each install's incident is open (the console's state), ...
    expect(await sql("SELECT key FROM alert_incidents WHERE open")).toHaveLength(5_000);
    // ... and the notifications are the first 20 on their own, then one digest for the rest.
    let jobs = await alertJobs();
    expect(countByType(jobs)).toEqual({ "sync.failing": threshold, "digest.firing": 1 });
    const digest = jobs.find((job) => job.type === "digest.firing")!;
    expect(digest.details).toMatchObject({ kind: "sync.failing", installs: threshold + 1, alertedAlone: threshold, held: 1, windowSeconds: 600 });
    expect(String(digest.details.sample).split(", ")).toHaveLength(10);
    expect(await sql("SELECT type, alerts, held, resolved, closed_at FROM alert_digests")).toEqual([
      { type: "sync.failing", alerts: 5_000, held: 5_000 - threshold, resolved: 0, closed_at: null },
    ]);

    // The identity provider is back: every sync completes.
    await inParallel(installs, 16, (id) => alertOnSyncOutcome(id, "completed", null));
    expect(await sql("SELECT key FROM alert_incidents WHERE open")).toEqual([]);
    jobs = await alertJobs();
    expect(countByType(jobs)).toEqual({ "sync.failing": threshold, "digest.firing": 1, "sync.recovered": threshold, "digest.recovered": 1 });
    const recovery = jobs.find((job) => job.type === "digest.recovered")!;
    expect(recovery.incident).toBe(digest.incident);
    expect(recovery.details).toMatchObject({ kind: "sync.failing", installs: 5_000, alertedAlone: threshold, held: 5_000 - threshold });

    // Delivered, signed, to the receiver: exactly one digest and one recovery digest.
    expect(resultOf<DeliverySummary>(await runAppWorker(["deliver-alerts", "100"]))).toEqual({ delivered: 2 * threshold + 2, failed: 0, more: false });
    const received = await receivedAlerts();
    expect(received.every((alert) => alert.signature === "valid")).toBe(true);
    const bodies = received.map((alert) => JSON.parse(alert.body) as { type: string; status: string; incident: string; summary: string });
    expect(countByType(bodies)).toEqual({ "sync.failing": threshold, "digest.firing": 1, "sync.recovered": threshold, "digest.recovered": 1 });
    const [firing, resolved] = [bodies.find((b) => b.type === "digest.firing")!, bodies.find((b) => b.type === "digest.recovered")!];
    expect(firing).toMatchObject({ status: "firing", incident: digest.incident });
    expect(firing.summary).toMatch(/^21 installs entered sync\.failing within 10 minutes \(more than 20\)/);
    expect(resolved).toMatchObject({ status: "resolved", incident: digest.incident });
    expect(resolved.summary).toMatch(/^All 4980 installs held in the sync\.failing digest have recovered/);
  }, scaled(600_000));

  it("the real path at small scale: refreshes fail while the identity provider is down, syncs fail, one digest; it comes back, one recovery digest", async () => {
    // Four installs whose access tokens have expired in the app's record: every sync starts with a refresh.
    const bulk = await bulkInstalls({ count: 4 });
    const ids = await storeBulkInstalls(bulk, new Date(Date.now() - 2 * 3_600_000));
    // Small numbers for four installs: the second one in the window is the last alerted on its own.
    const settings = { ALERT_DIGEST_THRESHOLD: "2", ALERT_SYNC_FAILURES: "1" };
    /** One sync run of each install, all at once in one worker process. */
    const syncAll = async () =>
      resultOf<{ summaries: { outcome: string; reason: string | null }[] }>(await runAppWorker(["sync-many", ids.join(","), "100"], settings)).summaries.map((s) => [s.outcome, s.reason]);

    await control("POST", "/idp-behaviour", { discovery: "503" });
    expect(await syncAll()).toEqual(Array(4).fill(["failed", "token_refresh_unavailable"]));
    // Each install's refresh attempt is in its history: nothing was sent.
    const history = await sql<{ outcome: string; detail: string }>("SELECT outcome, detail FROM refresh_attempts ORDER BY id");
    expect(history).toHaveLength(4);
    for (const attempt of history) expect(attempt).toEqual({ outcome: "unavailable", detail: "discovery unavailable HTTP 503; nothing was sent" });
    expect(await sql("SELECT key FROM alert_incidents WHERE open")).toHaveLength(4);
    expect(countByType(await alertJobs())).toEqual({ "sync.failing": 2, "digest.firing": 1 });

    await control("POST", "/idp-behaviour", { discovery: "up" });
    expect(await syncAll()).toEqual(Array(4).fill(["completed", null]));
    expect(await sql("SELECT key FROM alert_incidents WHERE open")).toEqual([]);
    expect((await sql<{ outcome: string }>("SELECT outcome FROM refresh_attempts ORDER BY id")).map((row) => row.outcome)).toEqual([
      ...Array(4).fill("unavailable"),
      ...Array(4).fill("refreshed"),
    ]);
    const jobs = await alertJobs();
    expect(countByType(jobs)).toEqual({ "sync.failing": 2, "digest.firing": 1, "sync.recovered": 2, "digest.recovered": 1 });
    expect(jobs.find((job) => job.type === "digest.recovered")!.details).toMatchObject({ kind: "sync.failing", installs: 4, alertedAlone: 2, held: 2 });
    expect(resultOf<DeliverySummary>(await runAppWorker(["deliver-alerts"]))).toEqual({ delivered: 6, failed: 0, more: false });
  }, scaled(180_000));

  it("a crash's lost answers send one alert; an install of them that moves on to another trouble keeps that incident, and the crash's recovery is not sent on it", async () => {
    const { alertOnReconnected, alertOnRefreshAnswerLost } = await import("@/lib/alerts/incidents");
    const { transitionInstall } = await import("@/lib/installs/state");
    const { db } = await import("@/lib/db/client");
    const [first, second] = (await storeInstalls(2)) as [string, string];
    const reconnectBy = new Date(Date.now() + 3_600_000);
    for (const id of [first, second]) await db().$transaction((tx) => alertOnRefreshAnswerLost(tx, id, reconnectBy));
    expect((await alertJobs()).map((a) => [a.type, a.incident])).toEqual([["install.reconnect_needed", `install:${first}`]]);

    // The first meets 403 NEEDS_REAUTH (another trouble, on its incident); then the second reconnects.
    await db().$transaction((tx) => transitionInstall(tx, first, "NEEDS_REAUTH", "api", "test"));
    await db().$transaction((tx) => alertOnReconnected(tx, second));
    expect((await alertJobs()).map((a) => a.type)).toEqual(["install.reconnect_needed", "install.needs_reauth"]);
    // The first re-consents: its own recovery closes its incident.
    await db().$transaction((tx) => transitionInstall(tx, first, "ACTIVE", "api", "test"));
    expect((await alertJobs()).map((a) => [a.type, a.incident])).toEqual([
      ["install.reconnect_needed", `install:${first}`],
      ["install.needs_reauth", `install:${first}`],
      ["install.recovered", `install:${first}`],
    ]);
  });

  it("below the threshold each install alerts on its own; a held install's recovery is folded, one alerted alone recovers alone; a quiet spell starts a new window", async () => {
    const { transitionInstall } = await import("@/lib/installs/state");
    const { db } = await import("@/lib/db/client");
    const move = (id: string, to: "NEEDS_REAUTH" | "ACTIVE") => db().$transaction((tx) => transitionInstall(tx, id, to, "api", "test"));
    const installs = await storeInstalls(23);

    // The app's scopes were widened: 23 installs flagged one after the other. 20 alone, the 21st fires the digest.
    for (const id of installs) await move(id, "NEEDS_REAUTH");
    expect(countByType(await alertJobs())).toEqual({ "install.needs_reauth": 20, "digest.firing": 1 });

    // Two held installs re-consent: nothing is sent for them. One alerted alone re-consents: its recovery is sent.
    await move(installs[21]!, "ACTIVE");
    await move(installs[22]!, "ACTIVE");
    await move(installs[0]!, "ACTIVE");
    let jobs = await alertJobs();
    expect(countByType(jobs)).toEqual({ "install.needs_reauth": 20, "digest.firing": 1, "install.recovered": 1 });
    expect(jobs.at(-1)!.incident).toBe(`install:${installs[0]}`);
    // The last held one: the recovery digest.
    await move(installs[20]!, "ACTIVE");
    jobs = await alertJobs();
    expect(countByType(jobs)).toEqual({ "install.needs_reauth": 20, "digest.firing": 1, "install.recovered": 1, "digest.recovered": 1 });
    expect(jobs.at(-1)!.details).toMatchObject({ kind: "install.needs_reauth", installs: 23, held: 3, alertedAlone: 20 });

    // An hour later (the window long over): one install flagged again alerts on its own.
    await sql("UPDATE alert_digests SET window_started_at = window_started_at - interval '1 hour', last_alert_at = last_alert_at - interval '1 hour'");
    await move(installs[22]!, "NEEDS_REAUTH");
    jobs = await alertJobs();
    expect(jobs.at(-1)).toMatchObject({ type: "install.needs_reauth", incident: `install:${installs[22]}` });
    expect(await sql("SELECT alerts, held FROM alert_digests WHERE fired_at IS NULL")).toEqual([{ alerts: 1, held: 0 }]);
  });
});
