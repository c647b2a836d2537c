// `npm run bench -- storage`: how much the database weighs after a month, with and without the
// history purge (lib/retention/purge.ts, the rules of lib/retention/rules.ts).
import { performance } from "node:perf_hooks";
import { sql } from "../../tests/helpers/stack";

/**
 * STORAGE_INSTALLS active installs (BENCH_STORAGE_INSTALLS, default 10,000) for STORAGE_DAYS days
 * (BENCH_STORAGE_DAYS, default 30), at the default cadences. The tables grow linearly with installs, so
 * a smaller run (1,000) gives the same figure per 1,000 installs in a tenth of the time and disk; the
 * run without the purge holds every row of every day (at 10,000 installs and 30 days, about 86 million
 * sync runs and 7 million refresh attempts: some 27 GB).
 *
 * BENCH_STORAGE_PASSES: `both` (the default), or `with` / `without` to measure one side alone, when
 * the other was measured already or there is no time or disk for it. The tables print only what was
 * measured, and say which side was not.
 */
const STORAGE_INSTALLS = Number(process.env.BENCH_STORAGE_INSTALLS ?? 10_000);
const STORAGE_DAYS = Number(process.env.BENCH_STORAGE_DAYS ?? 30);
const STORAGE_PASSES = process.env.BENCH_STORAGE_PASSES ?? "both";
if (!Number.isInteger(STORAGE_INSTALLS) || STORAGE_INSTALLS < 10 || STORAGE_INSTALLS > 20_000) {
  console.error("bench: BENCH_STORAGE_INSTALLS must be a whole number from 10 to 20000");
  process.exit(2);
}
if (!Number.isInteger(STORAGE_DAYS) || STORAGE_DAYS < 2 || STORAGE_DAYS > 120) {
  console.error("bench: BENCH_STORAGE_DAYS must be a whole number from 2 to 120");
  process.exit(2);
}
if (!["both", "with", "without"].includes(STORAGE_PASSES)) {
  console.error("bench: BENCH_STORAGE_PASSES must be both, with or without");
  process.exit(2);
}
const RUN_WITHOUT = STORAGE_PASSES !== "with";
const RUN_WITH = STORAGE_PASSES !== "without";

/**
 * What an active install writes per day besides its sync runs (one per registered resource every
 * SYNC_INTERVAL_MINUTES): assumptions, generous ones, since the service's traffic is not shown.
 * Webhook deliveries: two a day (configuration changes, the sandbox's events are rarer). Install status
 * changes: one every five days. Staff actions: one every twenty days.
 */
const DELIVERIES_PER_INSTALL_DAY = 2;
const EVENTS_PER_INSTALL_DAY = 0.2;
const STAFF_ACTIONS_PER_INSTALL_DAY = 0.05;
/**
 * Refresh attempts (refresh_attempts): an active install's access token lives an hour (the sandbox's,
 * sandbox/lifetimes.ts; contract §3), and the sync, every SYNC_INTERVAL_MINUTES, refreshes it when it
 * is within minutes of expiring (lib/oauth/access.ts): one attempt an hour, 24 a day. Keep-alive
 * (lib/jobs/keep-alive.ts) only refreshes a grant idle for 23 days, which an active install's never is.
 */
const REFRESHES_PER_INSTALL_DAY = 24;
/**
 * Sync runs that keep their row (lib/sync/history.ts): those that changed records, each failure and
 * the run that recovers from it. The rest are quiet: no row, only their count in sync_days (a run that
 * may be quiet writes its row at its first change or its end). Assumptions, generous ones: charges change in one run an hour
 * (a charge started or ended), charge points four times a day, any other resource once; one run per
 * install a day fails (the service unavailable), its resource's next run recovers.
 */
const CHANGING_RUNS_PER_DAY: Record<string, number> = { charges: 24, charge_points: 4 };
const CHANGING_RUNS_DEFAULT = 1;

/** A delivery's payload as stored: an install.config.updated envelope, about 250 bytes of JSON. */
const PAYLOAD = {
  id: "whd_00000000-0000-0000-0000-000000000000",
  type: "install.config.updated",
  delivered_at: 1_790_000_000,
  data: { install_id: 5_000_000, operator_id: 5_000_000, config: { siteIds: ["site-1", "site-2"], syncCharges: true, currency: "NOK" } },
};

/**
 * The tables the app writes history to while an install is active (the `window` rules). Not
 * alert_digests: they grow with alert storms, not with installs and days (a few rows a storm).
 */
const TABLES = ["sync_runs", "sync_days", "refresh_attempts", "webhook_deliveries", "install_events", "staff_actions"] as const;
type Table = (typeof TABLES)[number];
type Sizes = Record<Table, { rows: number; bytes: number }>;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toLocaleString("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 1 })} MB`;
const n = (value: number) => Math.round(value).toLocaleString("en-US");

export async function storage() {
  const { env } = await import("../../lib/env");
  const { SYNCED_RESOURCES } = await import("../../lib/sync/resources");
  const { purgeTable } = await import("../../lib/retention/purge");
  const resources = SYNCED_RESOURCES.map((resource) => resource.name);
  const interval = env().SYNC_INTERVAL_MINUTES;
  const runsPerDay = Math.floor((24 * 60) / interval);
  console.log(
    `\n== storage (${n(STORAGE_INSTALLS)} installs, ${STORAGE_DAYS} days bulk-inserted a day at a time; ${resources.length} resources every ${interval} min = ` +
      `${n(STORAGE_INSTALLS * resources.length * runsPerDay)} sync runs (kept: those that changed data, ${resources.map((r) => `${r} ${CHANGING_RUNS_PER_DAY[r] ?? CHANGING_RUNS_DEFAULT}`).join(", ")} a day, and 1 failure and its recovery) and ${n(STORAGE_INSTALLS * REFRESHES_PER_INSTALL_DAY)} refresh attempts a day; ` +
      `windows: sync runs ${env().SYNC_RUN_RETENTION_DAYS} d, refresh attempts ${env().REFRESH_ATTEMPT_RETENTION_DAYS} d, deliveries ${env().WEBHOOK_DELIVERY_RETENTION_DAYS} d, audit ${env().AUDIT_RETENTION_DAYS} d) ==`,
  );

  // The installs, apart from the other sections' (operator ids from 5,000,000).
  await sql(
    `INSERT INTO installs (id, install_id, client_id, operator_id, granted_scopes, status, updated_at)
     SELECT gen_random_uuid(), 5000000 + s, $2, (5000000 + s)::text, ARRAY['charge-points:read'], 'ACTIVE', now()
     FROM generate_series(1, $1::int) AS s`,
    [STORAGE_INSTALLS, process.env.OAUTH_CLIENT_ID],
  );
  const installFilter = "i.operator_id::bigint >= 5000000";
  // Simulated days end where the wall clock is now: day d covers [start + d, start + d + 1).
  const start = new Date(Date.now() - STORAGE_DAYS * 86_400_000);
  const dayStart = (day: number) => new Date(start.getTime() + day * 86_400_000);

  const clear = () => sql(`TRUNCATE ${TABLES.join(", ")}`);
  // Rows go in in time order (ORDER BY), as the app writes them, so the table's pages hold its rows
  // by time as a real one's do and the purge's walk of the time index reads them as it would there.
  // Run k of the day (0 ..) of install s and resource r changes records when (k + s) % (runs a day /
  // its changes a day) is 0; run (96 - s % 96) of charges fails and the one after it recovers.
  const everyNth = resources.map((r) => Math.max(1, Math.floor(runsPerDay / (CHANGING_RUNS_PER_DAY[r] ?? CHANGING_RUNS_DEFAULT))));
  const runsSql = `
       SELECT i.id AS install_row_id, r, t, k,
         CASE WHEN r = 'charges' AND (k + i.install_id) % $4::int = 0 THEN 'failed'
              WHEN r = 'charges' AND (k + i.install_id) % $4::int = 1 THEN 'recovered'
              WHEN (k + i.install_id) % nth = 0 THEN 'changed' ELSE 'quiet' END AS kind
       FROM installs i CROSS JOIN unnest($2::text[], $5::int[]) AS x(r, nth)
       CROSS JOIN LATERAL (SELECT $1::timestamptz + make_interval(mins => $3 * k) AS t, k FROM generate_series($6::int, $7::int) AS k) AS run
       WHERE ${installFilter}`;
  const insertDay = async (day: number) => {
    const from = dayStart(day);
    // A quiet run writes no sync_runs row (lib/sync/history.ts): only the others go in.
    await sql(
      `INSERT INTO sync_runs (id, install_row_id, resource, pass_kind, pass_id, started_at, finished_at, duration_ms, pages, records_upserted, requests, outcome, error_kind)
       SELECT gen_random_uuid(), install_row_id, r, 'incremental', gen_random_uuid(), t, t + interval '4 seconds', 4000, 1, 3, 1,
         CASE kind WHEN 'failed' THEN 'failed' ELSE 'completed' END, CASE WHEN kind = 'failed' THEN 'unavailable' END
       FROM (${runsSql}) AS runs WHERE kind <> 'quiet' ORDER BY t, install_row_id`,
      [from, resources, interval, runsPerDay, everyNth, 0, runsPerDay - 1],
    );
    // The day's counts as they stand at its end (the app upserts them run by run, an update in place).
    await sql(
      `INSERT INTO sync_days (id, install_row_id, day, resource, runs, quiet_runs, failures, records_changed, last_quiet_at)
       SELECT gen_random_uuid(), install_row_id, ($1::timestamptz AT TIME ZONE 'UTC')::date, r, count(*),
         count(*) FILTER (WHERE kind = 'quiet'), count(*) FILTER (WHERE kind = 'failed'), 3 * count(*) FILTER (WHERE kind = 'changed'),
         max(t) FILTER (WHERE kind = 'quiet') + interval '4 seconds'
       FROM (${runsSql}) AS runs GROUP BY install_row_id, r ORDER BY install_row_id, r`,
      [from, resources, interval, runsPerDay, everyNth, 0, runsPerDay - 1],
    );
    // Each install's attempts an hour apart, at its own minute of the hour, all routine successes: the
    // history folds a day of them into one row (lib/oauth/refresh-history.ts), updated in place.
    await sql(
      `INSERT INTO refresh_attempts (install_row_id, attempted_at, attempts, last_attempted_at, duration_ms, outcome, host, pid)
       SELECT i.id, t, $2::int, t + make_interval(mins => (1440 / $2::int) * ($2::int - 1)), 180, 'refreshed', 'worker-7f9c6d5b8-x2k4q', 4242
       FROM installs i CROSS JOIN LATERAL (SELECT $1::timestamptz + make_interval(secs => (i.install_id % 3600)) AS t) AS first
       WHERE ${installFilter} ORDER BY 2`,
      [from, REFRESHES_PER_INSTALL_DAY],
    );
    await sql(
      `INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, received_at, outcome, detail, payload)
       SELECT gen_random_uuid(), 'id:whd_' || gen_random_uuid(), 'install.config.updated', i.install_id, t, t, 'processed', 'configuration stored', $3::jsonb
       FROM installs i CROSS JOIN generate_series(1, $2::int) AS k
       CROSS JOIN LATERAL (SELECT $1::timestamptz + random() * interval '1 day' AS t) AS at
       WHERE ${installFilter} ORDER BY t`,
      [from, DELIVERIES_PER_INSTALL_DAY, JSON.stringify(PAYLOAD)],
    );
    await sql(
      `INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail, occurred_at)
       SELECT gen_random_uuid(), i.id, 'ACTIVE', 'ACTIVE', 'reconcile', 'install checked against the API', $1::timestamptz + random() * interval '1 day'
       FROM installs i WHERE ${installFilter} AND random() < $2 ORDER BY 7`,
      [from, EVENTS_PER_INSTALL_DAY],
    );
    await sql(
      `INSERT INTO staff_actions (id, staff_email, staff_role, action, install_row_id, install_id, outcome, detail, requested_at, finished_at)
       SELECT gen_random_uuid(), 'staff@example.com', 'operator', 'sync', i.id, i.install_id, 'queued', 'A sync was queued.', t, t
       FROM installs i CROSS JOIN LATERAL (SELECT $1::timestamptz + random() * interval '1 day' AS t) AS at
       WHERE ${installFilter} AND random() < $2 ORDER BY t`,
      [from, STAFF_ACTIONS_PER_INSTALL_DAY],
    );
  };
  // Each table with its indexes and TOAST; rows counted only at the end of a run (a count is a scan).
  const measure = async (countRows = false): Promise<Sizes> => {
    const sizes = {} as Sizes;
    for (const table of TABLES) {
      const [row] = await sql<{ rows: string; bytes: string }>(
        `SELECT ${countRows ? `(SELECT count(*) FROM ${table})` : "0"} AS rows, pg_total_relation_size('${table}') AS bytes`,
      );
      sizes[table] = { rows: Number(row!.rows), bytes: Number(row!.bytes) };
    }
    return sizes;
  };
  const total = (sizes: Sizes) => TABLES.reduce((sum, table) => sum + sizes[table].bytes, 0);

  // 1. Without the purge: every day's rows stay.
  const without: number[] = [];
  let withoutSizes: Sizes | null = null;
  if (RUN_WITHOUT) {
    await clear();
    const t0 = performance.now();
    for (let day = 0; day < STORAGE_DAYS; day++) {
      await insertDay(day);
      withoutSizes = await measure(day === STORAGE_DAYS - 1);
      without.push(total(withoutSizes));
      console.log(`without the purge, day ${String(day + 1).padStart(3)}: ${mb(total(withoutSizes))}`);
    }
    console.log(`${"without the purge: inserted".padEnd(44)} ${STORAGE_DAYS} days in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }

  // 2. With the purge: after each day, the purge as the hourly job would have run it by the day's
  // end (its `now` is the day's end), then VACUUM, which autovacuum does on its own (the migration
  // lowers its threshold on these tables, prisma/migrations/20261126234500_retention), so the space
  // the purge freed is reused by the next day's rows.
  const withPurge: number[] = [];
  const purgeMs: number[] = [];
  const vacuumMs: number[] = [];
  let withSizes: Sizes | null = null;
  if (RUN_WITH) {
    await clear();
    const t0 = performance.now();
    for (let day = 0; day < STORAGE_DAYS; day++) {
      await insertDay(day);
      const p0 = performance.now();
      for (const table of TABLES) await purgeTable(table, { now: dayStart(day + 1), timeLimitMs: Number.POSITIVE_INFINITY });
      purgeMs.push(performance.now() - p0);
      const v0 = performance.now();
      await sql(`VACUUM ${TABLES.join(", ")}`);
      vacuumMs.push(performance.now() - v0);
      withSizes = await measure(day === STORAGE_DAYS - 1);
      withPurge.push(total(withSizes));
      console.log(`with the purge,    day ${String(day + 1).padStart(3)}: ${mb(total(withSizes))} (purge ${(purgeMs[day]! / 1000).toFixed(1)} s, vacuum ${(vacuumMs[day]! / 1000).toFixed(1)} s)`);
    }
    console.log(`${"with the purge: inserted, purged".padEnd(44)} ${STORAGE_DAYS} days in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }

  // A side not measured in this run prints as such, never as a zero.
  const NOT_RUN = "not measured";
  const size = (bytes: number | undefined) => (bytes === undefined ? NOT_RUN : mb(bytes));
  const count = (sizes: Sizes | null, pick: (sizes: Sizes) => number) => (sizes ? n(pick(sizes)) : NOT_RUN);
  console.log(`\n${n(STORAGE_INSTALLS)} installs, measured: ${STORAGE_PASSES === "both" ? "with and without the purge" : `${STORAGE_PASSES} the purge only`}`);
  console.log("day  size without the purge  size with the purge  purge (s)  vacuum (s)");
  for (let day = 0; day < STORAGE_DAYS; day++) {
    const seconds = (ms: number | undefined) => (ms === undefined ? "-" : (ms / 1000).toFixed(1));
    console.log(
      `${String(day + 1).padStart(3)}  ${size(without[day]).padStart(22)}  ${size(withPurge[day]).padStart(19)}  ${seconds(purgeMs[day]).padStart(9)}  ${seconds(vacuumMs[day]).padStart(10)}`,
    );
  }
  console.log(`\nafter ${STORAGE_DAYS} days            rows without    size without      rows with       size with`);
  for (const table of TABLES) {
    console.log(
      `${table.padEnd(24)} ${count(withoutSizes, (s) => s[table].rows).padStart(15)} ${size(withoutSizes?.[table].bytes).padStart(15)} ` +
        `${count(withSizes, (s) => s[table].rows).padStart(14)} ${size(withSizes?.[table].bytes).padStart(15)}`,
    );
  }
  const rows = (sizes: Sizes) => TABLES.reduce((sum, table) => sum + sizes[table].rows, 0);
  const totalOf = (sizes: Sizes | null) => (sizes ? total(sizes) : undefined);
  console.log(
    `${"total".padEnd(24)} ${count(withoutSizes, rows).padStart(15)} ${size(totalOf(withoutSizes)).padStart(15)} ${count(withSizes, rows).padStart(14)} ${size(totalOf(withSizes)).padStart(15)}`,
  );
  const per1000 = (sizes: Sizes | null) => (sizes ? total(sizes) * (1000 / STORAGE_INSTALLS) : undefined);
  console.log(`${"per 1,000 installs".padEnd(24)} ${"".padStart(15)} ${size(per1000(withoutSizes)).padStart(15)} ${"".padStart(14)} ${size(per1000(withSizes)).padStart(15)}`);
  const steady = purgeMs.slice(Math.max(env().SYNC_RUN_RETENTION_DAYS, env().REFRESH_ATTEMPT_RETENTION_DAYS));
  if (steady.length > 0) {
    const sorted = [...steady].sort((a, b) => a - b);
    console.log(
      `purge per simulated day, once the windows are full: median ${(sorted[Math.floor(sorted.length / 2)]! / 1000).toFixed(1)} s, max ${(sorted.at(-1)! / 1000).toFixed(1)} s ` +
        `(${n(STORAGE_INSTALLS * resources.length * runsPerDay)} sync runs and ${n(STORAGE_INSTALLS * REFRESHES_PER_INSTALL_DAY)} refresh attempts a day; the hourly job does a 24th of it per run)`,
    );
  }
  await clear();
  await sql(`DELETE FROM installs i WHERE ${installFilter}`);
}
