// The history purge (lib/retention/purge.ts): every table with a `window` rule (lib/retention/rules.ts)
// loses its rows past the window in batches, keeps what the console and the webhook dedupe need, can be
// stopped between batches and goes on at the next run, and runs as the retention job (a job per table).
import { createHmac, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { signInStaffWithFetch } from "../helpers/staff-sign-in";

const { purgeTable, purgeBatchStatement, findTablesDueForPurge } = await import("@/lib/retention/purge");
const { env } = await import("@/lib/env");

beforeEach(resetWorld);
afterAll(closeSql);

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

/** `count` active installs, stored as the redirect_uri would (only the columns the purge reads matter). */
async function insertInstalls(count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await sql(
    `INSERT INTO installs (id, install_id, client_id, operator_id, granted_scopes, status, updated_at)
     SELECT id, 70000 + n, $2, (80000 + n)::text, ARRAY['charge-points:read'], 'ACTIVE', now()
     FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n)`,
    [ids, process.env.OAUTH_CLIENT_ID],
  );
  return ids;
}

/** One sync run of each resource of each install, every `everyHours`, from `fromDays` ago to now. */
async function insertRuns(installs: string[], resources: string[], fromDays: number, everyHours: number, toDays = 0): Promise<void> {
  await sql(
    `INSERT INTO sync_runs (id, install_row_id, resource, started_at, finished_at, outcome)
     SELECT gen_random_uuid(), i, r, t, t + interval '1 minute', 'completed'
     FROM unnest($1::uuid[]) AS i CROSS JOIN unnest($2::text[]) AS r
     CROSS JOIN generate_series(now() - make_interval(days => $3), now() - make_interval(days => $5), make_interval(hours => $4)) AS t`,
    [installs, resources, fromDays, everyHours, toDays],
  );
}

describe("the history purge", () => {
  it("deletes sync runs past the window in batches, and keeps each install's latest finished run per resource and the runs within the window", async () => {
    const window = env().SYNC_RUN_RETENTION_DAYS;
    const [busy, quiet, stalled] = await insertInstalls(3);
    // busy: a run every 6 hours for 30 days. quiet: its last runs 40 days ago (the console still reads
    // its latest outcome). stalled: a finished run 20 days ago, then one still "running" (a dead
    // process): the finished one is its latest outcome, the running one is newer than it.
    await insertRuns([busy!], ["charge_points", "charges"], 30, 6);
    await insertRuns([quiet!], ["charge_points", "charges"], 50, 24, 40);
    await insertRuns([stalled!], ["charges"], 25, 24, 20);
    await sql(`INSERT INTO sync_runs (id, install_row_id, resource, started_at, outcome) VALUES (gen_random_uuid(), $1, 'charges', now() - interval '19 days', 'running')`, [stalled]);
    await sql(`UPDATE sync_runs SET outcome = 'failed', error_kind = 'unavailable' WHERE install_row_id = $1 AND resource = 'charges' AND started_at = (SELECT max(started_at) FROM sync_runs WHERE install_row_id = $1 AND resource = 'charges')`, [quiet]);

    const expectedKept = await sql<{ id: string }>(
      `SELECT id FROM sync_runs r WHERE r.started_at >= now() - make_interval(days => $1)
          OR NOT EXISTS (SELECT 1 FROM sync_runs n WHERE n.install_row_id = r.install_row_id AND n.resource = r.resource
                         AND n.outcome <> 'running' AND n.started_at > r.started_at)
       ORDER BY id`,
      [window],
    );
    const [{ total }] = (await sql<{ total: number }>("SELECT count(*)::int AS total FROM sync_runs")) as [{ total: number }];
    expect(total - expectedKept.length).toBeGreaterThan(100); // there is something to purge

    const summary = await purgeTable("sync_runs", { batchRows: 25 });
    expect(summary).toMatchObject({ table: "sync_runs", deleted: total - expectedKept.length, stoppedEarly: false });
    expect(summary.batches).toBeGreaterThan(4);
    expect(await sql<{ id: string }>("SELECT id FROM sync_runs ORDER BY id")).toEqual(expectedKept);

    // What the console and the dashboard read is still there: the quiet install's latest outcome per
    // resource (a failure), the stalled install's finished run and the running one after it.
    const quietLatest = await sql<{ resource: string; outcome: string }>(
      "SELECT resource, outcome FROM sync_runs WHERE install_row_id = $1 ORDER BY resource",
      [quiet],
    );
    expect(quietLatest).toEqual([{ resource: "charge_points", outcome: "completed" }, { resource: "charges", outcome: "failed" }]);
    expect((await sql<{ outcome: string }>("SELECT outcome FROM sync_runs WHERE install_row_id = $1 ORDER BY started_at", [stalled])).map((r) => r.outcome)).toEqual(["completed", "running"]);

    // A second run finds nothing more to delete, and says so.
    expect(await purgeTable("sync_runs", { batchRows: 25 })).toMatchObject({ deleted: 0, stoppedEarly: false });
  });

  it("stopped between batches, leaves whole batches deleted and the rest for the next run, which goes on", async () => {
    const installs = await insertInstalls(4);
    await insertRuns(installs, ["charge_points"], 40, 4);
    const [{ old }] = (await sql<{ old: number }>(
      "SELECT count(*)::int AS old FROM sync_runs WHERE started_at < now() - make_interval(days => $1)",
      [env().SYNC_RUN_RETENTION_DAYS],
    )) as [{ old: number }];

    const stopped = await purgeTable("sync_runs", { batchRows: 20, maxBatches: 3 });
    expect(stopped).toMatchObject({ stoppedEarly: true, batches: 3, deleted: 60 });
    const [purge] = await sql("SELECT outcome, deleted_rows, batches FROM retention_purges WHERE table_name = 'sync_runs'");
    expect(purge).toEqual({ outcome: "more", deleted_rows: 60, batches: 3 });

    // The process stopping (its signal) ends a run before its next batch.
    const stopping = new AbortController();
    stopping.abort();
    expect(await purgeTable("sync_runs", { batchRows: 20, signal: stopping.signal })).toMatchObject({ stoppedEarly: true, batches: 0, deleted: 0 });

    const rest = await purgeTable("sync_runs", { batchRows: 20 });
    expect(rest.stoppedEarly).toBe(false);
    // Each install still runs every 4 hours, so its latest run is inside the window: every run past
    // the window goes, the ones the first run took and the ones this run took, none twice.
    expect(60 + rest.deleted).toBe(old);
    expect(await sql("SELECT 1 FROM sync_runs WHERE started_at < now() - make_interval(days => $1)", [env().SYNC_RUN_RETENTION_DAYS])).toEqual([]);
  });

  it("checks each batch row's keep-newest rule by a probe of its group's index, never by a join that reads the whole table per batch", async () => {
    // At 10,000 installs (43 million sync runs) PostgreSQL planned the rule, written as an EXISTS in the
    // DELETE's WHERE, as a hash semi join: a sequential scan of the whole table for each batch of 5,000,
    // which made a day's purge take over 20 minutes. A small table gets a nested loop and sequential
    // scans either way, so the planner is pushed here to where size pushes it: to hash joins
    // (enable_nestloop off), under which a rule written as a join shows as one, and away from reading
    // whole tables (enable_seqscan off). The rule as a column of the batch is a per-row index probe (SubPlan).
    const installs = await insertInstalls(3);
    await insertRuns(installs, ["charge_points", "charges"], 30, 6);
    await sql("ANALYZE sync_runs, refresh_attempts, install_events");
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      await client.query("SET enable_nestloop = off");
      await client.query("SET enable_seqscan = off");
      for (const table of ["sync_runs", "refresh_attempts", "install_events"] as const) {
        const statement = purgeBatchStatement(table, new Date(), { at: daysAgo(40), id: table === "refresh_attempts" ? "0" : randomUUID() }, 5000);
        const { rows } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${statement.text}`, statement.values);
        const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
        expect(plan, table).not.toMatch(/Semi Join|Anti Join/);
        expect(plan, table).toMatch(new RegExp(`SubPlan[\\s\\S]*Index (Only )?Scan (Backward )?using \\w+ on ${table} n\\b`));
      }
    } finally {
      await client.end();
    }
  });

  it("keeps every webhook delivery inside its window, so a replay of one is still answered as a duplicate", async () => {
    const window = env().WEBHOOK_DELIVERY_RETENTION_DAYS;
    const id = `whd_${randomUUID()}`;
    const deliver = async (deliveredAt: number) => {
      const body = JSON.stringify({ id, type: "install.created", delivered_at: deliveredAt, data: { install_id: 9001, operator_id: 1002, slug: "harbor-ev" } });
      const response = await fetch(`${stack.appUrl}/api/webhooks`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Volt-Signature": `sha256=${createHmac("sha256", stack.webhookSecret).update(body).digest("hex")}` },
        body,
      });
      return { status: response.status, body: await response.json() };
    };
    expect(await deliver(Math.floor(Date.now() / 1000))).toEqual({ status: 200, body: { status: "processed" } });
    // Recorded an hour short of the window's end; another delivery an hour past it.
    const [{ key }] = (await sql<{ key: string }>("SELECT dedupe_key AS key FROM webhook_deliveries")) as [{ key: string }];
    expect(key).toContain(id); // the envelope's id (docs/spec-gaps.md A7)
    await sql("UPDATE webhook_deliveries SET received_at = $1", [new Date(daysAgo(window).getTime() + 3_600_000)]);
    await sql(
      `INSERT INTO webhook_deliveries (id, dedupe_key, event_type, received_at, outcome) VALUES (gen_random_uuid(), 'whd_old', 'install.created', $1, 'processed')`,
      [new Date(daysAgo(window).getTime() - 3_600_000)],
    );

    expect(await purgeTable("webhook_deliveries")).toMatchObject({ deleted: 1, stoppedEarly: false });
    expect((await sql<{ dedupe_key: string }>("SELECT dedupe_key FROM webhook_deliveries")).map((r) => r.dedupe_key)).toEqual([key]);
    // The service's replay (contract §6, §5.7): the same id, a new delivered_at. Still a copy.
    expect(await deliver(Math.floor(Date.now() / 1000))).toEqual({ status: 200, body: { status: "duplicate" } });
    expect(await sql("SELECT count(*)::int AS n FROM installs")).toEqual([{ n: 1 }]);
  });

  it("keeps the audit logs for AUDIT_RETENTION_DAYS, and each install's latest status change whatever its age", async () => {
    const window = env().AUDIT_RETENTION_DAYS;
    const [install] = await insertInstalls(1);
    for (const [days, to] of [[window + 30, "ACTIVE"], [window + 10, "NEEDS_REAUTH"], [window + 5, "ACTIVE"]] as const) {
      await sql(`INSERT INTO install_events (id, install_row_id, to_status, cause, occurred_at) VALUES (gen_random_uuid(), $1, $2, 'webhook', $3)`, [install, to, daysAgo(days)]);
    }
    for (const days of [window + 1, window - 1]) {
      await sql(
        `INSERT INTO staff_actions (id, staff_email, staff_role, action, outcome, requested_at) VALUES (gen_random_uuid(), 'staff@example.com', 'operator', 'sync', 'queued', $1)`,
        [daysAgo(days)],
      );
    }
    expect(await purgeTable("install_events")).toMatchObject({ deleted: 2 });
    expect(await purgeTable("staff_actions")).toMatchObject({ deleted: 1 });
    // The install's latest change (how it got to ACTIVE) stays, although it is past the window.
    expect(await sql("SELECT to_status FROM install_events WHERE install_row_id = $1", [install])).toEqual([{ to_status: "ACTIVE" }]);
    expect(await sql<{ n: number }>("SELECT count(*)::int AS n FROM staff_actions")).toEqual([{ n: 1 }]);
  });

  it("deletes refresh attempts past their window in batches walked by their sequence id, and keeps each install's latest attempt whatever its age", async () => {
    const window = env().REFRESH_ATTEMPT_RETENTION_DAYS;
    const [busy, gone] = await insertInstalls(2);
    // busy: an attempt every hour for twice the window (its access token lives an hour). gone: its
    // last attempts long ago, the very last refused (the refresh chain ended: staff still see why).
    const attempts = (install: string, fromDays: number, toDays: number, everyHours: number) =>
      sql(
        `INSERT INTO refresh_attempts (install_row_id, attempted_at, duration_ms, outcome, host, pid)
         SELECT $1, t, 120, 'refreshed', 'worker-1', 4242
         FROM generate_series(now() - make_interval(days => $2), now() - make_interval(days => $3), make_interval(hours => $4)) AS t`,
        [install, fromDays, toDays, everyHours],
      );
    await attempts(busy!, window * 2, 0, 1);
    await attempts(gone!, window + 20, window + 10, 6);
    await sql(`UPDATE refresh_attempts SET outcome = 'refused', detail = 'invalid_grant' WHERE id = (SELECT max(id) FROM refresh_attempts WHERE install_row_id = $1)`, [gone]);

    const expectedKept = await sql<{ id: string }>(
      `SELECT id::text FROM refresh_attempts r WHERE r.attempted_at >= now() - make_interval(days => $1)
          OR r.attempted_at = (SELECT max(attempted_at) FROM refresh_attempts n WHERE n.install_row_id = r.install_row_id)
       ORDER BY id`,
      [window],
    );
    const [{ total }] = (await sql<{ total: number }>("SELECT count(*)::int AS total FROM refresh_attempts")) as [{ total: number }];
    expect(total - expectedKept.length).toBeGreaterThan(300);

    const summary = await purgeTable("refresh_attempts", { batchRows: 50 });
    expect(summary).toMatchObject({ table: "refresh_attempts", deleted: total - expectedKept.length, stoppedEarly: false });
    expect(summary.batches).toBeGreaterThan(6);
    expect(await sql<{ id: string }>("SELECT id::text FROM refresh_attempts ORDER BY id")).toEqual(expectedKept);
    expect(await sql("SELECT outcome, detail FROM refresh_attempts WHERE install_row_id = $1", [gone])).toEqual([{ outcome: "refused", detail: "invalid_grant" }]);
    expect(await purgeTable("refresh_attempts", { batchRows: 50 })).toMatchObject({ deleted: 0 });
  });

  it("deletes alert digests that are over once past the audit window, their members with them, and keeps a fired digest still waiting for recoveries", async () => {
    const window = env().AUDIT_RETENTION_DAYS;
    const [install] = await insertInstalls(1);
    /** A digest whose last alert was `days` ago, with two members (one held when it fired). */
    const digest = async (days: number, state: "never fired" | "closed" | "open"): Promise<string> => {
      const at = daysAgo(days);
      const [{ id }] = (await sql<{ id: string }>(
        `INSERT INTO alert_digests (id, type, window_started_at, last_alert_at, alerts, held, resolved, fired_at, closed_at)
         VALUES (gen_random_uuid(), 'install.reinstall_needed', $1, $1, 2, $2, $3, $4, $5) RETURNING id::text`,
        [at, state === "never fired" ? 0 : 1, state === "closed" ? 1 : 0, state === "never fired" ? null : at, state === "closed" ? at : null],
      )) as [{ id: string }];
      await sql(
        `INSERT INTO alert_digest_members (digest_id, incident, install_row_id, held, joined_at, resolved_at)
         VALUES ($1, 'install:' || $2::text, $2::uuid, false, $3, NULL), ($1, 'install:' || $2::text, $2::uuid, $4, $3, $5)`,
        [id, install, at, state !== "never fired", state === "closed" ? at : null],
      );
      return id;
    };
    const oldOpen = await digest(window + 60, "open");
    const recentClosed = await digest(window - 5, "closed");
    const recentQuiet = await digest(1, "never fired");
    // An old digest still open is no reason to run: nothing of it can go.
    expect(await findTablesDueForPurge()).not.toContain("table:alert_digests");
    const over = [await digest(window + 5, "never fired"), await digest(window + 3, "closed")];
    expect(await findTablesDueForPurge()).toContain("table:alert_digests");

    expect(await purgeTable("alert_digests")).toMatchObject({ deleted: 2, stoppedEarly: false });
    const left = (await sql<{ id: string }>("SELECT id::text FROM alert_digests ORDER BY id")).map((row) => row.id);
    expect(left).toEqual([oldOpen, recentClosed, recentQuiet].sort());
    // Members went with their digest (ON DELETE CASCADE); the open digest's held member still waits.
    expect(await sql("SELECT 1 FROM alert_digest_members WHERE digest_id = ANY($1::uuid[])", [over])).toEqual([]);
    expect(await sql("SELECT held, resolved_at FROM alert_digest_members WHERE digest_id = $1 ORDER BY id", [oldOpen])).toEqual([
      { held: false, resolved_at: null },
      { held: true, resolved_at: null },
    ]);
  });

  it("deletes alert digests at most 200 to a statement, since each takes its members along", async () => {
    const [install] = await insertInstalls(1);
    const at = daysAgo(env().AUDIT_RETENTION_DAYS + 1);
    await sql(
      `WITH d AS (
         INSERT INTO alert_digests (id, type, window_started_at, last_alert_at, alerts)
         SELECT gen_random_uuid(), 'sync.failing', $1::timestamptz - make_interval(mins => s), $1::timestamptz - make_interval(mins => s), 1
         FROM generate_series(1, 450) AS s RETURNING id, last_alert_at)
       INSERT INTO alert_digest_members (digest_id, incident, install_row_id, held, joined_at)
       SELECT id, 'sync:' || $2::text, $2::uuid, false, last_alert_at FROM d`,
      [at, install],
    );
    expect(await purgeTable("alert_digests", { batchRows: 5_000 })).toMatchObject({ deleted: 450, batches: 3, stoppedEarly: false });
    expect(await sql("SELECT count(*)::int AS n FROM alert_digest_members")).toEqual([{ n: 0 }]);
  });

  it("runs as the retention job, a job per table with rows past its window, and the console shows each table's last purge", async () => {
    const [install] = await insertInstalls(1);
    await insertRuns([install!], ["charges"], env().SYNC_RUN_RETENTION_DAYS + 3, 12);
    await sql(`INSERT INTO webhook_deliveries (id, dedupe_key, received_at, outcome) VALUES (gen_random_uuid(), 'whd_job', $1, 'processed')`, [daysAgo(env().WEBHOOK_DELIVERY_RETENTION_DAYS + 1)]);
    expect((await findTablesDueForPurge()).sort()).toEqual(["table:sync_runs", "table:webhook_deliveries"]);

    const response = await fetch(`${stack.appUrl}/api/cron/retention`, { method: "POST", headers: { Authorization: `Bearer ${process.env.CRON_SECRET}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ job: "retention", due: 2, enqueued: 2, worked: 2, outcomes: { purged: 2 } });
    expect(await sql("SELECT 1 FROM webhook_deliveries")).toEqual([]);
    expect(await sql("SELECT 1 FROM sync_runs WHERE started_at < now() - make_interval(days => $1)", [env().SYNC_RUN_RETENTION_DAYS])).toEqual([]);
    const purges = await sql<{ table_name: string; outcome: string; deleted_rows: number }>("SELECT table_name, outcome, deleted_rows FROM retention_purges ORDER BY table_name");
    expect(purges.map((p) => [p.table_name, p.outcome])).toEqual([["sync_runs", "done"], ["webhook_deliveries", "done"]]);
    expect(purges[1]!.deleted_rows).toBe(1);

    const staff = await signInStaffWithFetch(process.env.STAFF_DEV_EMAIL!, process.env.STAFF_DEV_PASSWORD!);
    const page = await (await fetch(`${stack.appUrl}/admin`, { headers: { cookie: staff.sessionCookie! } })).text();
    expect(page).toContain('data-testid="retention-line"');
    expect(page).toMatch(/data-purge-table="webhook_deliveries" data-purge-outcome="done" data-purge-deleted="1"/);
    expect(page).toContain('data-purge-table="sync_runs"');
  });
});
