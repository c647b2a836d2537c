// A burst of webhook deliveries against the running app (issue 9): the service never retries
// (contract §6), so a delivery refused in a burst is lost until someone asks for a replay. Counts,
// not times: every delivery answered 200 and recorded once with its effect, or 503 (refused before
// the deadline, A201) and recorded never; a failure of that kind gives the machine's load.
// npm test: alone: bursts of 2,000 deliveries answered within the app's deadline: another file's load beside it
// would measure the machine, not the app (scripts/lib/test-lanes.ts).
import { createHmac } from "node:crypto";
import pg from "pg";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { machineLoad, postAtOnce } from "../helpers/burst";
import { closeSql, control, installViaPortal, resetWorld, sql, stack } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

const sign = (body: string) => `sha256=${createHmac("sha256", stack.webhookSecret).update(body).digest("hex")}`;
const now = () => Math.floor(Date.now() / 1000);

/** Sends every signed body at once to the app's webhook route. */
function sendAtOnce(bodies: string[]): Promise<(number | string)[]> {
  return postAtOnce(bodies.map((body) => ({ url: `${stack.appUrl}/api/webhooks`, body, headers: { "X-Volt-Signature": sign(body) } })));
}

const tally = (statuses: (number | string)[]) => statuses.reduce<Record<string, number>>((counts, s) => ({ ...counts, [s]: (counts[s] ?? 0) + 1 }), {});

beforeEach(resetWorld);
afterAll(closeSql);

describe("a burst of webhook deliveries", () => {
  it("2,000 distinct deliveries sent at once: each answered 200 and recorded once with one effect, or 503 and recorded never", { timeout: scaled(120_000) }, async () => {
    // The deadline counts from arrival at the node server (lib/http/arrival.ts): what the app cannot
    // record in time it refuses with 503, recording nothing (contract §6: replayed on request).
    const bodies = Array.from({ length: 2000 }, (_, i) =>
      JSON.stringify({ id: `whd_burst_${i}`, type: "install.created", delivered_at: now(), data: { install_id: 50_000 + i, operator_id: 50_000 + i, slug: `burst-${i}` } }),
    );
    const statuses = await sendAtOnce(bodies);
    const counted = tally(statuses);
    expect((counted[200] ?? 0) + (counted[503] ?? 0)).toBe(2000);
    const recorded = await sql<{ id: string }>("SELECT substr(dedupe_key, 4) AS id FROM webhook_deliveries");
    expect(recorded.map((r) => r.id).sort()).toEqual(statuses.flatMap((s, i) => (s === 200 ? [`whd_burst_${i}`] : [])).sort());
    const answered = counted[200] ?? 0;
    const [counts] = await sql<{ deliveries: number; keys: number; installs: number; events: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
              (SELECT count(DISTINCT dedupe_key)::int FROM webhook_deliveries) AS keys,
              (SELECT count(*)::int FROM installs WHERE status = 'ACTIVE') AS installs,
              (SELECT count(*)::int FROM install_events) AS events`,
    );
    expect(counts).toEqual({ deliveries: answered, keys: answered, installs: answered, events: answered });
  });

  it("300 lost deliveries replayed by the service all at once: every one answered 2xx and recorded once", { timeout: scaled(60_000) }, async () => {
    // The sandbox's burst replay (POST /_sandbox/deliveries/replay) of configuration changes that
    // were lost when they were first sent: the full transaction's path, under a burst.
    const { installId } = await installViaPortal(1001);
    await control("POST", "/webhook-modes", { type: "install.config.updated", mode: "drop", count: 300 });
    for (let i = 0; i < 300; i++) await control("POST", `/installs/${installId}/config`, { syncCharges: i % 2 === 0 });
    const { deliveries } = await control<{ deliveries: { detail: { delivery_id: string; mode: string | null } }[] }>(
      "GET",
      "/deliveries?event_type=install.config.updated",
    );
    const ids = deliveries.filter((d) => d.detail.mode === "drop").map((d) => d.detail.delivery_id);
    expect(ids).toHaveLength(300);

    // A delivery refused with 503 (the record deadline, A201, on a busy machine) is recorded never and
    // replayed again, as the service's operator would: every one is recorded within a few rounds.
    let pending = ids;
    const rounds: Record<string, number>[] = [];
    for (let round = 0; round < 5 && pending.length > 0; round++) {
      const replay = await control<{ replayed: number; statuses: Record<string, number> }>("POST", "/deliveries/replay", { ids: pending });
      rounds.push(replay.statuses);
      expect(Object.keys(replay.statuses).filter((status) => status !== "200" && status !== "503"), JSON.stringify(replay)).toEqual([]);
      const recorded = new Set((await sql<{ id: string }>("SELECT substr(dedupe_key, 4) AS id FROM webhook_deliveries WHERE event_type = 'install.config.updated'")).map((r) => r.id));
      pending = pending.filter((id) => !recorded.has(id));
    }
    expect(pending, `not recorded after ${rounds.length} replays (${JSON.stringify(rounds)}; ${machineLoad()})`).toEqual([]);
    expect(await sql("SELECT count(*)::int AS n, count(DISTINCT dedupe_key)::int AS keys FROM webhook_deliveries WHERE event_type = 'install.config.updated'")).toEqual([
      { n: 300, keys: 300 },
    ]);
    // Every delivery recorded, and the configuration they carry stored.
    const [install] = await sql<{ config: { syncCharges: boolean } }>("SELECT config FROM installs WHERE install_id = $1", [installId]);
    expect(typeof install!.config.syncCharges).toBe("boolean");
  });

  it("deliveries stuck behind a lock wait on the ingest's own connections, never on the pages'", { timeout: scaled(60_000) }, async () => {
    // Another session locks the deliveries table for a second: every delivery meanwhile waits.
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE webhook_deliveries IN EXCLUSIVE MODE");
      const bodies = Array.from({ length: 20 }, (_, i) =>
        JSON.stringify({ id: `whd_stuck_${i}`, type: "install.created", delivered_at: now(), data: { install_id: 70_000 + i, operator_id: 70_000 + i } }),
      );
      const answers = sendAtOnce(bodies);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // More deliveries are waiting than the pages' pool has connections (DATABASE_POOL_SIZE=10),
      // and the app is still ready: its readiness check gets a connection at once.
      for (let i = 0; i < 3; i++) expect((await fetch(`${stack.appUrl}/api/ready`)).status).toBe(200);
      await holder.query("COMMIT");
      expect(tally(await answers)).toEqual({ 200: 20 });
    } finally {
      await holder.end();
    }
    expect(await sql("SELECT count(*)::int AS n FROM installs")).toEqual([{ n: 20 }]);
  });

  it("two installs of each of 200 operators, all announced at once: the newer one is live, every time", { timeout: scaled(60_000) }, async () => {
    // Half the deliveries meet a state the one-statement path cannot decide (the operator already
    // has a live install) and take the full transaction, racing the others for the same operators.
    const bodies = Array.from({ length: 200 }, (_, op) =>
      [1, 2].map((n) =>
        JSON.stringify({ id: `whd_race_${op}_${n}`, type: "install.created", delivered_at: now(), data: { install_id: 60_000 + op * 2 + n, operator_id: 60_000 + op, slug: "race" } }),
      ),
    ).flat();
    const statuses = await sendAtOnce(bodies);
    expect(tally(statuses)).toEqual({ 200: 400 });
    const rows = await sql<{ operator_id: string; live: number[]; revoked: number[] }>(
      `SELECT operator_id,
              array_agg(install_id ORDER BY install_id) FILTER (WHERE status = 'ACTIVE') AS live,
              array_agg(install_id ORDER BY install_id) FILTER (WHERE status = 'REVOKED') AS revoked
       FROM installs GROUP BY operator_id ORDER BY operator_id`,
    );
    expect(rows).toHaveLength(200);
    for (const row of rows) {
      const op = Number(row.operator_id) - 60_000;
      expect(row).toEqual({ operator_id: row.operator_id, live: [60_000 + op * 2 + 2], revoked: [60_000 + op * 2 + 1] });
    }
    expect(await sql("SELECT count(*)::int AS n FROM webhook_deliveries")).toEqual([{ n: 400 }]);
  });
});
