// The job engine (lib/jobs/): pg-boss queues keyed per install, fan-outs on indexed due queries,
// retries with backoff into a dead-letter queue, workers in separate processes, the cron routes'
// bounded runs, and webhook follow-ups that survive the process that recorded them.
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { PgBoss } from "pg-boss";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InstallJobData } from "../../lib/jobs/enqueue";
import { JOB_KIND_NAMES, JOB_KINDS } from "../../lib/jobs/kinds";
import { migrateJobSchema } from "../../lib/jobs/schema";
import { resultOf, runAppWorker, startAppWorker } from "../helpers/app-process";
import { migratedScratchDatabase } from "../helpers/database";
import { armApiFault, clearApiFaults, closeSql, control, installViaPortal, knowIssuer, operatorRecords, resetWorld, sandboxEvents, sql, stack } from "../helpers/stack";
import { sentOnTheWire } from "../helpers/wire";
import { scaled } from "../helpers/time-scale";

beforeEach(resetWorld);
afterAll(closeSql);

/**
 * What one keep-alive refresh sends to PostgreSQL from the app's process (see the test that counts
 * them): 9; it was 12 while the grant, its install and its refresh token were three reads under the
 * lock, and closing the circuit and asking about its alert were two statements.
 */
const STATEMENTS_PER_KEEP_ALIVE_REFRESH = 9;

const workers = new Set<ChildProcess>();
afterEach(async () => {
  for (const child of workers) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }
  workers.clear();
});

/** `npm run worker`, as a separate process. */
function startWorker(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", path.resolve("node_modules/tsx/dist/esm/index.mjs"), "scripts/worker.ts"], {
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  workers.add(child);
  let output = "";
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return { child, output: () => output };
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 25_000): Promise<T> {
  const stopAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > stopAt) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Sends a job for every install every 100 ms, until each install has had `runsEach` completed runs
 * and every one of `pids` has done some of them (or `timeoutMs` passes): as long as the proof needs
 * and no longer, however slowly the workers start on a busy machine. Then waits for the queue to drain.
 */
async function keepSending(queue: string, cause: InstallJobData["cause"], installRowIds: string[], enough: { runsEach: number; pids: (number | undefined)[] }, timeoutMs = 60_000) {
  const boss = new PgBoss({ connectionString: stack.databaseUrl, schema: "pgboss", max: 2, supervise: false, schedule: false, migrate: false, registerInstance: false });
  await boss.start();
  try {
    const stopAt = Date.now() + timeoutMs;
    for (;;) {
      const done = (await jobs(queue)).filter((job) => job.state === "completed");
      const runs = (id: string) => done.filter((job) => job.singleton_key === id).length;
      const pids = new Set(done.map((job) => job.output?.pid));
      if ((installRowIds.every((id) => runs(id) >= enough.runsEach) && enough.pids.every((pid) => pids.has(pid))) || Date.now() > stopAt) break;
      for (const installRowId of installRowIds) await boss.send(queue, { installRowId, cause } satisfies InstallJobData, { singletonKey: installRowId });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await until(`every ${queue} job to finish`, () => jobs(queue), (rows) => rows.every((job) => job.state === "completed"), 60_000);
  } finally {
    await boss.stop({ graceful: false });
  }
}

type JobRow = { id: string; name: string; state: string; singleton_key: string; retry_count: number; start_after: Date; started_on: Date | null; completed_on: Date | null; output: Record<string, unknown> | null };
const jobs = (queue: string) =>
  sql<JobRow>("SELECT id, name, state::text, singleton_key, retry_count, start_after, started_on, completed_on, output FROM pgboss.job WHERE name = $1 ORDER BY created_on", [queue]);

/** Many installs straight into the tables (no tokens that work): for the fan-out's queries, never worked here. */
async function bulkInstalls(count: number) {
  await sql(
    `WITH rows AS (
       INSERT INTO installs (id, install_id, client_id, operator_id, granted_scopes, status, last_reconciled_at, updated_at)
       SELECT gen_random_uuid(), 500000 + n, $1, 'bulk-' || n, '{}', 'ACTIVE', now(), now() FROM generate_series(1, $2::int) n
       RETURNING id)
     INSERT INTO token_grants (id, install_row_id, access_token_encrypted, refresh_token_encrypted, access_token_expires_at, refresh_token_expires_at, scope, updated_at)
     SELECT gen_random_uuid(), id, 'not-a-token', 'not-a-token', now() + interval '1 hour', now() + interval '29 days', '', now() FROM rows`,
    [process.env.OAUTH_CLIENT_ID, count],
  );
}

describe("the job schema", () => {
  it("is made by `npm run db:migrate` (not by the app): until then /api/ready says pending and the worker refuses to start", async () => {
    const database = await migratedScratchDatabase(); // the app's tables only
    try {
      const before = resultOf<{ ready: boolean; checks: { migrations: string } }>(await runAppWorker(["ready"], { DATABASE_URL: database.url }));
      expect(before).toMatchObject({ ready: false, checks: { database: "ok", migrations: "pending" } });
      const worker = startWorker({ DATABASE_URL: database.url });
      expect(await new Promise((resolve) => worker.child.once("exit", resolve))).toBe(1);
      expect(worker.output()).toMatch(/the job engine could not start \(has `npm run db:migrate` run\?\)/);

      // What `npm run db:migrate` does after the Prisma migrations; twice is harmless.
      await migrateJobSchema(database.url);
      // A schedule no kind declares any more (a kind a fork removed) is removed by the next run.
      const boss = new PgBoss({ connectionString: database.url, schema: "pgboss", max: 1, supervise: false, schedule: false, migrate: false, registerInstance: false });
      await boss.start();
      await boss.createQueue("usage-report");
      await boss.schedule("usage-report", "15 4 * * *", null, { tz: "UTC" });
      await boss.stop({ graceful: false });
      expect((await migrateJobSchema(database.url)).removedSchedules).toEqual(["usage-report"]);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const scheduled = await client.query<{ name: string }>("SELECT name FROM pgboss.schedule").finally(() => client.end());
      expect(scheduled.rows.map((row) => row.name).sort()).toEqual(JOB_KIND_NAMES.map((kind) => JOB_KINDS[kind].fanOutQueue).sort());
      const after = resultOf<{ ready: boolean; checks: { migrations: string } }>(await runAppWorker(["ready"], { DATABASE_URL: database.url }));
      expect(after).toMatchObject({ ready: true, checks: { migrations: "ok" } });
    } finally {
      await database.drop();
    }
  });
});

describe("fan-out", () => {
  it("keep-alive: one job per due install, found through the index, and none twice", async () => {
    await bulkInstalls(10_000);
    // 40 of them due (refresh tokens expiring within the 7-day horizon).
    await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '2 days' WHERE install_row_id IN (SELECT id FROM installs ORDER BY install_id LIMIT 40)");
    await sql("ANALYZE installs, token_grants");

    // The very query the fan-out runs (lib/jobs/keep-alive.ts), EXPLAINed: it reads the index, not the table.
    const { keepAliveDueQuery } = await import("@/lib/jobs/keep-alive");
    const query = keepAliveDueQuery(new Date());
    const [plan] = await sql<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${query.text}`, query.values);
    const planText = JSON.stringify(plan!["QUERY PLAN"]);
    expect(planText).toContain("token_grants_refresh_token_expires_at_idx");
    expect(planText).not.toMatch(/"Node Type":"Seq Scan","Parent Relationship":"[^"]*","Parallel Aware":false,"Async Capable":false,"Relation Name":"token_grants"/);

    expect(resultOf(await runAppWorker(["fan-out", "keep-alive"]))).toEqual({ due: 40, enqueued: 40 });
    // Again (a second worker, the next tick): the installs already queued get no second job.
    expect(resultOf(await runAppWorker(["fan-out", "keep-alive"]))).toEqual({ due: 40, enqueued: 0 });
    const queued = await jobs("keep-alive.install");
    expect(queued).toHaveLength(40);
    expect(new Set(queued.map((job) => job.singleton_key)).size).toBe(40);
  });

  it("reconcile sweep: one job per due install, found through the index", async () => {
    await bulkInstalls(10_000);
    await sql("UPDATE installs SET last_reconciled_at = now() - interval '1 hour' WHERE id IN (SELECT id FROM installs ORDER BY install_id LIMIT 25)");
    await sql("UPDATE installs SET last_reconciled_at = NULL WHERE id IN (SELECT id FROM installs ORDER BY install_id DESC LIMIT 5)");
    await sql("ANALYZE installs, token_grants");

    const { installCheckDueQuery } = await import("@/lib/jobs/install-check");
    const query = installCheckDueQuery(new Date());
    const [plan] = await sql<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${query.text}`, query.values);
    expect(JSON.stringify(plan!["QUERY PLAN"])).toContain("installs_status_last_reconciled_at_idx");

    expect(resultOf(await runAppWorker(["fan-out", "reconcile"]))).toEqual({ due: 30, enqueued: 30 });
    expect(await jobs("install-check")).toHaveLength(30);
  });
});

describe("the cron routes (serverless hosts)", () => {
  const cron = (query = "") =>
    fetch(`${stack.appUrl}/api/cron/reconcile${query}`, { method: "POST", headers: { Authorization: `Bearer ${process.env.CRON_SECRET}` } });

  it("work off a bounded batch per call, and the next call goes on from there", async () => {
    for (let i = 0; i < 5; i++) await installViaPortal(1001 + i, { clientAddress: `198.51.100.${i + 1}` });
    await sql("UPDATE installs SET last_reconciled_at = NULL");

    const first = await cron("?maxJobs=2");
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ job: "reconcile", due: 5, enqueued: 5, worked: 2, outcomes: { live: 2 }, more: true });
    // The three left are still due, and already queued: nothing new is enqueued, two more are worked.
    expect(await (await cron("?maxJobs=2")).json()).toMatchObject({ due: 3, enqueued: 0, worked: 2, more: true });
    expect(await (await cron("?maxJobs=2")).json()).toMatchObject({ due: 1, enqueued: 0, worked: 1, more: false });
    expect(await (await cron()).json()).toMatchObject({ due: 0, enqueued: 0, worked: 0, more: false });
    expect((await jobs("install-check")).map((job) => job.state)).toEqual(Array(5).fill("completed"));
  });

  it("refuse a bad batch limit with 400, and strangers with 401", async () => {
    for (const query of ["?maxJobs=0", "?maxJobs=1001", "?maxJobs=abc", "?maxJobs=1.5"]) {
      const response = await cron(query);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ status: "invalid_query" });
    }
    const stranger = await fetch(`${stack.appUrl}/api/cron/reconcile?maxJobs=5`, { method: "POST" });
    expect(stranger.status).toBe(401);
    expect(await jobs("install-check")).toEqual([]);
  });

  it("answer at /api/cron/<kind> for every kind, GET or POST; a path that names no kind is a 404 for the scheduler and a 401 for strangers", async () => {
    const bearer = { Authorization: `Bearer ${process.env.CRON_SECRET}` };
    // One URL per declared kind (the template's four are what docs/deploying.md schedules).
    for (const kind of JOB_KIND_NAMES) {
      for (const method of ["GET", "POST"]) {
        const response = await fetch(`${stack.appUrl}/api/cron/${kind}`, { method, headers: bearer });
        expect({ kind, method, status: response.status }).toEqual({ kind, method, status: 200 });
        expect(await response.json()).toMatchObject({ job: kind, due: 0, worked: 0 });
      }
    }
    // Names that are no kind, inherited names of every JavaScript object included.
    for (const name of ["payments", "constructor", "__proto__", "toString", "keep-alive.install"]) {
      const response = await fetch(`${stack.appUrl}/api/cron/${name}`, { method: "POST", headers: bearer });
      expect({ name, status: response.status, body: await response.json() }).toEqual({ name, status: 404, body: { status: "unknown_job" } });
      const stranger = await fetch(`${stack.appUrl}/api/cron/${name}`, { method: "POST" });
      expect({ name, status: stranger.status }).toEqual({ name, status: 401 });
    }
  });
});

describe("retries", () => {
  it("a failing job is retried with growing delays, then lands in the dead-letter queue", async () => {
    const install = await installViaPortal(1001);
    await sql("UPDATE installs SET last_reconciled_at = NULL");
    // The API fails every check of this install (503), for longer than the test.
    await armApiFault({ path: "/consumers/me", mode: "error503", forMs: 120_000, installId: install.installId });
    expect(resultOf(await runAppWorker(["fan-out", "reconcile"]))).toEqual({ due: 1, enqueued: 1 });

    const delays: number[] = [];
    // Six runs of the queue's own jobs, no fan-out, in one process that waits for a line between runs:
    // time moves on for the job alone (start_after, below).
    // (The API client's own retries of a 503 are the budget's business, tested elsewhere: off here.)
    const worker = startAppWorker(["work", "reconcile", "1000", "6"], { API_MAX_RETRIES: "0" });
    workers.add(worker.child); // stopped after the test, whatever happens
    let printed = "";
    worker.child.stdout!.on("data", (chunk: string) => (printed += chunk));
    const nthResult = (n: number) =>
      until(`run ${n}'s summary`, async () => printed.split("\n").slice(0, -1).filter((line) => line.startsWith('{"worked"')), (lines) => lines.length >= n).then((lines) => JSON.parse(lines[n - 1]!) as unknown);
    for (let attempt = 1; attempt <= 6; attempt++) {
      if (attempt > 1) worker.child.stdin!.write("go\n");
      const run = await nthResult(attempt);
      expect(run).toMatchObject({ worked: 1, outcomes: { retrying: 1 } });
      const [job] = await jobs("install-check");
      if (attempt <= 5) {
        // (pg-boss counts retries when a job is taken again: the n-th failure leaves retry_count n - 1.)
        expect(job).toMatchObject({ state: "retry", retry_count: attempt - 1 });
        delays.push((job!.start_after.getTime() - Date.now()) / 1000);
        // Fast-forward the backoff: the job is due now.
        await sql("UPDATE pgboss.job SET start_after = now() WHERE id = $1", [job!.id]);
      } else {
        expect(job).toMatchObject({ state: "failed" });
      }
    }
    expect((await worker.done).code).toBe(0);
    // pg-boss's exponential backoff from 60 s, with jitter, capped at 30 minutes (lib/jobs/kinds.ts):
    // attempt n waits between 60 s × 2^n / 2 and 60 s × 2^n.
    delays.forEach((delay, i) => {
      const n = i + 1;
      expect(delay).toBeGreaterThanOrEqual(Math.min(1800, (60 * 2 ** n) / 2) - 5);
      expect(delay).toBeLessThanOrEqual(Math.min(1800, 60 * 2 ** n) + 5);
    });
    // Six attempts in all, then a copy in the dead-letter queue for staff, naming where it came from.
    const dead = await sql<{ data: { installRowId: string }; state: string }>("SELECT data, state::text FROM pgboss.job WHERE name = 'install-check.dead-letter'");
    expect(dead).toEqual([{ data: { installRowId: install.installRowId, cause: "sweep" }, state: "created" }]);
    expect((await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId && String(e.detail.path).endsWith("/consumers/me")).length).toBeGreaterThanOrEqual(6);
    // A dead letter stops nothing for good: the next sweep enqueues the install afresh.
    expect(resultOf(await runAppWorker(["fan-out", "reconcile"]))).toEqual({ due: 1, enqueued: 1 });
  }, scaled(120_000));
});

describe("workers in separate processes", () => {
  it("two workers share the work and never work the same install at once", async () => {
    const installs = [];
    for (let i = 0; i < 6; i++) installs.push(await installViaPortal(1001 + i, { clientAddress: `198.51.100.${i + 1}` }));
    await sql("UPDATE installs SET last_reconciled_at = now()"); // the sweep has nothing due: only the jobs below run
    // Each check takes 300 ms at the API, so that checks of one install would overlap if they could.
    await armApiFault({ path: "/consumers/me", mode: "latency", latencyMs: 300, forMs: 60_000 });
    const one = startWorker({ JOB_CONCURRENCY: "4" });
    const two = startWorker({ JOB_CONCURRENCY: "4" });

    // Follow-ups arrive for every install, again and again, while the workers run.
    await keepSending("install-check", "webhook", installs.map((install) => install.installRowId), { runsEach: 2, pids: [one.child.pid, two.child.pid] });

    const done = await jobs("install-check");
    // Several checks per install, one after another: never two at once for one install.
    expect(done.length).toBeGreaterThanOrEqual(installs.length * 2);
    for (const install of installs) {
      const runs = done.filter((job) => job.singleton_key === install.installRowId).sort((a, b) => a.started_on!.getTime() - b.started_on!.getTime());
      expect(runs.length).toBeGreaterThan(1);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.started_on!.getTime()).toBeGreaterThanOrEqual(runs[i - 1]!.completed_on!.getTime());
    }
    // Both processes did some of it.
    const pids = new Set(done.map((job) => job.output?.pid));
    expect(pids).toEqual(new Set([one.child.pid, two.child.pid]));
  });

  it("keep-alive over many installs: each refreshed exactly once by two workers, no chain revoked", async () => {
    const installs = [];
    for (let i = 0; i < 20; i++) installs.push(await installViaPortal(1001 + i, { clientAddress: `198.51.100.${i + 1}` }));
    await sql("UPDATE installs SET last_reconciled_at = now()");
    await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day'");
    startWorker();
    startWorker();

    await until("every grant refreshed", () => sql<{ version: number }>("SELECT version FROM token_grants"), (rows) => rows.every((row) => row.version >= 2));
    await until("the queue drained", () => jobs("keep-alive.install"), (rows) => rows.every((job) => job.state === "completed"));
    expect((await sql<{ version: number }>("SELECT version FROM token_grants")).map((row) => row.version)).toEqual(Array(20).fill(2));
    const stats = await control<{ calls: { refresh_token: number }; chain_revocations: number }>("GET", "/token-stats");
    expect(stats).toMatchObject({ calls: { refresh_token: 20 }, chain_revocations: 0 });
    expect((await jobs("keep-alive.install")).map((job) => job.output?.outcome)).toEqual(Array(20).fill("refreshed"));
    // Nothing is due any more.
    expect(resultOf(await runAppWorker(["fan-out", "keep-alive"]))).toEqual({ due: 0, enqueued: 0 });
  });
});

describe("keep-alive's own concurrency and cost", () => {
  it("KEEP_ALIVE_CONCURRENCY: keep-alive refreshes run that many at once, whatever JOB_CONCURRENCY says", async () => {
    const installs = [];
    for (let i = 0; i < 6; i++) installs.push(await installViaPortal(1001 + i, { clientAddress: `198.51.100.${i + 1}` }));
    await sql("UPDATE installs SET last_reconciled_at = now()");
    await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day'");
    // Each refresh waits 1.5 s at the identity provider: one at a time would take 9 s.
    await control("POST", "/faults", { tokenEndpoint: { mode: "delay", count: 100, delayMs: 1_500 } });
    try {
      startWorker({ JOB_CONCURRENCY: "1", KEEP_ALIVE_CONCURRENCY: "6", WORKER_JOBS: "keep-alive" });
      await until("every grant refreshed", () => sql<{ version: number }>("SELECT version FROM token_grants"), (rows) => rows.every((row) => row.version >= 2), 40_000);
      const done = await until("the queue drained", () => jobs("keep-alive.install"), (rows) => rows.length === 6 && rows.every((job) => job.state === "completed"));
      // The most jobs under way at one instant: refreshes overlapped, so keep-alive did not take JOB_CONCURRENCY (1).
      const overlapAt = (at: number) => done.filter((job) => job.started_on!.getTime() <= at && job.completed_on!.getTime() > at).length;
      const mostAtOnce = Math.max(...done.map((job) => overlapAt(job.started_on!.getTime())));
      expect(mostAtOnce).toBeGreaterThanOrEqual(3);
      expect(done.map((job) => job.output?.outcome)).toEqual(Array(6).fill("refreshed"));
    } finally {
      await control("DELETE", "/faults");
    }
  });

  it("one keep-alive refresh costs the app a handful of SQL statements (counted on the wire), not one per helper", async () => {
    const { installRowId } = await installViaPortal(1001);
    await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day' WHERE install_row_id = $1", [installRowId]);
    // The identity provider's kind is known already: its once-a-day look (lib/oauth/issuer-facts.ts) is not this refresh's cost.
    await knowIssuer();
    const { keepInstallAlive } = await import("@/lib/jobs/keep-alive");
    // Every statement this process sends, counted on the wire (tests/helpers/wire.ts).
    const { answers: outcome, sent } = await sentOnTheWire(() => keepInstallAlive(installRowId));
    expect(outcome).toBe("refreshed");
    // The due check, the lock and its release, the circuit's check, the grant read under the lock, the
    // marker, the new pair, the circuit's close-if-open with its incident check, and the history row
    // (lib/oauth/refresh.ts).
    // Besides: a successful refresh asks in one statement whether the identity provider's once-a-day
    // look is due (lib/oauth/issuer-facts.ts); here it is not, the kind being known.
    // And this process's first answer from the service asks once whether its host's clock incident is open
    // (lib/partner-api/service-clock.ts): a process's cost, not a refresh's.
    const perRefresh = sent.filter((text) => !text.includes("issuer_facts") && !text.includes("'clock:'"));
    expect(sent.filter((text) => text.includes("issuer_facts")).length).toBeLessThanOrEqual(1);
    expect(sent.filter((text) => text.includes("'clock:'")).length).toBeLessThanOrEqual(1);
    expect(perRefresh, perRefresh.join("\n")).toHaveLength(STATEMENTS_PER_KEEP_ALIVE_REFRESH);
    expect((await sql<{ version: number }>("SELECT version FROM token_grants WHERE install_row_id = $1", [installRowId]))[0]!.version).toBe(2);
  });
});

describe("a job held by a killed worker", () => {
  it("keep-alive: the worker is SIGKILLed while it holds the job; the job expires, a second worker finishes it, and the grant is refreshed once", async () => {
    const install = await installViaPortal(1001);
    await sql("UPDATE installs SET last_reconciled_at = now()"); // only keep-alive is due
    await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day'");
    // A short expiry for keep-alive's jobs (JOB_EXPIRE_SECONDS), set where they are enqueued and supervised.
    const expiry = { JOB_EXPIRE_SECONDS: "keep-alive=3", WORKER_JOBS: "keep-alive" };

    // Another instance holds the install's refresh lock (lib/oauth/refresh-lock.ts), so the first
    // worker's refresh waits for it: the worker has the job in hand and has sent nothing yet.
    const lock = new pg.Client({ connectionString: stack.databaseUrl });
    await lock.connect();
    try {
      await lock.query("SELECT pg_advisory_lock(hashtext($1))", [`refresh:${install.installRowId}`]);
      const first = startWorker(expiry);
      const [held] = await until("the first worker to take the job", () => jobs("keep-alive.install"), (rows) => rows[0]?.state === "active");
      await until(
        "its refresh to wait for the install's lock",
        // A waiting refresh holds no connection of its own: it retries the lock on its process's one
        // lock session (lib/oauth/refresh-lock.ts). This test process's own session, left by the test
        // before, ended on an unlock.
        () =>
          sql<{ waiting: number }>(
            "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE application_name LIKE '% refresh lock' AND query LIKE '%pg_try_advisory_lock%'",
          ),
        ([row]) => row!.waiting === 1,
      );
      first.child.kill("SIGKILL");
      await new Promise((resolve) => first.child.once("exit", resolve));
      // Killed holding the job: still active, nothing sent to the identity provider.
      expect((await jobs("keep-alive.install")).map((job) => [job.id, job.state])).toEqual([[held!.id, "active"]]);
      expect((await control<{ calls: { refresh_token: number } }>("GET", "/token-stats")).calls.refresh_token).toBe(0);
      await lock.query("SELECT pg_advisory_unlock(hashtext($1))", [`refresh:${install.installRowId}`]);

      // A second worker notices the expired job (3 s, then its supervisor's pass every second) and
      // retries it: within a bounded time, not the default 5 minutes.
      const killedAt = Date.now();
      const second = startWorker(expiry);
      const [retried] = await until("the expired job to be retried", () => jobs("keep-alive.install"), (rows) => rows[0]?.state === "retry", 20_000);
      expect(Date.now() - killedAt).toBeLessThan(20_000);
      expect(retried).toMatchObject({ id: held!.id, output: { value: { message: "job timed out" } } });
      // The retry's backoff (60 s and up, lib/jobs/kinds.ts; the retries test measures it) is fast-forwarded.
      await sql("UPDATE pgboss.job SET start_after = now() WHERE id = $1", [held!.id]);
      const [done] = await until("the second worker to finish it", () => jobs("keep-alive.install"), (rows) => rows[0]?.state === "completed", 15_000);

      // The same job, finished by the second worker: one refresh, the chain intact, no marker left.
      expect(done).toMatchObject({ id: held!.id, retry_count: 1, output: { outcome: "refreshed", pid: second.child.pid } });
      // The only job that refreshed. A second job for the install can exist: each worker asks for a
      // fan-out at start, throttled per clock minute (requestScheduledRuns), so when the two starts
      // fall on either side of a minute the second fan-out adds one beside the held job (the queue
      // keeps one waiting and one running); that one finds nothing due and sends nothing.
      const refreshed = (await jobs("keep-alive.install")).filter((job) => (job.output as { outcome?: string } | null)?.outcome === "refreshed");
      expect(refreshed.map((job) => job.id)).toEqual([held!.id]);
      expect(await control("GET", "/token-stats")).toMatchObject({ calls: { refresh_token: 1 }, chain_revocations: 0 });
      expect(await sql("SELECT version, refresh_started_at FROM token_grants WHERE install_row_id = $1", [install.installRowId])).toEqual([{ version: 2, refresh_started_at: null }]);
    } finally {
      await lock.end();
    }
  }, scaled(90_000));

  it("sync: the worker is SIGKILLed mid-sync; a second worker takes the expired job and resumes from the checkpoint, reading no finished page again", async () => {
    const install = await installViaPortal(1001);
    // The first sync the redirect_uri enqueued is dropped: the worker's own fan-out enqueues it, with
    // the short expiry of this test (JOB_EXPIRE_SECONDS is read where a job is enqueued).
    await sql("TRUNCATE pgboss.job");
    // Pages of 5: Northwind's 36 charges are 8 pages; each takes 400 ms at the API, so the sync can be killed mid-way.
    await armApiFault({ path: "/charges", mode: "latency", latencyMs: 400, forMs: 60_000 });
    // The expiry must stay above what the resumed run honestly takes, or it would be taken from the second worker too.
    const settings = { JOB_EXPIRE_SECONDS: "sync=6", WORKER_JOBS: "sync", SYNC_PAGE_SIZE: "5", JOB_CONCURRENCY: "1" };
    const first = startWorker(settings);
    const checkpoint = () => sql<{ next_page: number }>("SELECT next_page FROM sync_checkpoints WHERE install_row_id = $1 AND resource = 'charges'", [install.installRowId]);
    const [atKill] = await until("three pages of charges", checkpoint, (rows) => (rows[0]?.next_page ?? 0) >= 3);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));
    const [held] = await jobs("sync.install");
    expect(held).toMatchObject({ state: "active", singleton_key: install.installRowId });
    const finishedPages = (await checkpoint())[0]!.next_page;
    expect(finishedPages).toBeGreaterThanOrEqual(atKill!.next_page);
    await clearApiFaults(); // the resumed run goes at full speed

    const second = startWorker(settings);
    await until("the expired job to be retried", () => jobs("sync.install"), (rows) => rows.find((job) => job.id === held!.id)?.state === "retry", 20_000);
    // The backoff is fast-forwarded, as in the keep-alive case above.
    await sql("UPDATE pgboss.job SET start_after = now() WHERE id = $1", [held!.id]);
    await until("the second worker to finish it", () => jobs("sync.install"), (rows) => rows.find((job) => job.id === held!.id)?.state === "completed", 30_000);

    const [done] = (await jobs("sync.install")).filter((job) => job.id === held!.id);
    expect(done).toMatchObject({ retry_count: 1, output: { outcome: "completed", pid: second.child.pid } });
    const [stored] = await sql<{ charges: number }>("SELECT count(*)::int AS charges FROM synced_charges WHERE install_row_id = $1", [install.installRowId]);
    expect(stored!.charges).toBe((await operatorRecords(1001, "charges")).total);
    // The run resumed at the checkpoint: each page finished before the kill was requested once, by the first worker.
    const pages = new Map<number, number>();
    for (const event of await sandboxEvents("api")) {
      const url = new URL(String(event.detail.path), stack.sandboxUrl);
      if (event.detail.install_id !== install.installId || url.pathname !== "/api/v1/charges") continue;
      const page = Number(url.searchParams.get("page"));
      pages.set(page, (pages.get(page) ?? 0) + 1);
    }
    expect([...pages.keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (let page = 0; page < finishedPages; page++) expect(pages.get(page)).toBe(1);
  }, scaled(90_000));
});

describe("webhook follow-ups", () => {
  it("survive the process that recorded the delivery dying at once: the job is there, and the next worker runs it", async () => {
    // The redirect_uri first (its install.created is lost on the way), then the delivery replayed:
    // the install is known, so the delivery asks for a check of it (lib/webhooks/handlers/install-created.ts).
    await control("POST", "/webhook-modes", { type: "install.created", mode: "drop", count: 1 });
    const install = await installViaPortal(1001);
    await sql("UPDATE installs SET last_reconciled_at = NULL");
    // The delivery, as the service would send it: recorded by a process that is killed right after it answers.
    const body = JSON.stringify({
      id: `whd_${randomUUID()}`,
      type: "install.created",
      delivered_at: Math.floor(Date.now() / 1000),
      data: { install_id: install.installId, operator_id: 1001, slug: "northwind-charging" },
    });
    const signature = `sha256=${createHmac("sha256", stack.webhookSecret).update(body).digest("hex")}`;
    const receiver = startAppWorker(["receive-and-die", Buffer.from(body).toString("base64url"), signature]);
    const died = await receiver.done;
    expect(died.signal).toBe("SIGKILL");
    expect(died.stdout).toContain('"status":"processed"');

    // Nothing ran the follow-up in the dead process; the job waits in the queue.
    expect((await jobs("install-check")).map((job) => [job.state, job.singleton_key])).toEqual([["created", install.installRowId]]);
    const callsBefore = (await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId).length;

    startWorker();
    const [job] = await until("the follow-up to run", () => jobs("install-check"), (rows) => rows[0]?.state === "completed");
    expect(job!.output).toMatchObject({ outcome: "live" });
    expect((await sandboxEvents("api")).filter((e) => e.detail.install_id === install.installId).length).toBeGreaterThan(callsBefore);
    const [row] = await sql<{ last_reconciled_at: Date | null }>("SELECT last_reconciled_at FROM installs WHERE id = $1", [install.installRowId]);
    expect(row!.last_reconciled_at).not.toBeNull();
  });
});

describe("the sync on the engine", () => {
  it("a new install is synced right after its callback, by whichever worker takes the job", async () => {
    const install = await installViaPortal(1001);
    // The redirect_uri enqueued the first sync (lib/installs/connect.ts): no schedule has run yet.
    expect((await jobs("sync.install")).map((job) => [job.singleton_key, job.state])).toEqual([[install.installRowId, "created"]]);
    startWorker();
    const [done] = await until("the first sync", () => jobs("sync.install"), (rows) => rows.length > 0 && rows.every((job) => job.state === "completed"));
    expect(done!.output?.outcome).toBe("completed");
    const [counts] = await sql<{ charge_points: number; charges: number }>(
      `SELECT (SELECT count(*)::int FROM synced_charge_points WHERE install_row_id = $1) AS charge_points,
              (SELECT count(*)::int FROM synced_charges WHERE install_row_id = $1) AS charges`,
      [install.installRowId],
    );
    expect(counts).toEqual({ charge_points: (await operatorRecords(1001, "charge-points")).total, charges: (await operatorRecords(1001, "charges")).total });
  });

  it("two workers never sync the same install at once", async () => {
    const installs = [];
    for (let i = 0; i < 3; i++) installs.push(await installViaPortal(1001 + i, { clientAddress: `198.51.100.${i + 1}` }));
    // Each page takes 200 ms at the API, so that two syncs of one install would overlap if they could.
    await armApiFault({ path: "/charge-points", mode: "latency", latencyMs: 200, forMs: 60_000 });
    // One sync at a time per worker, so that both take part.
    const one = startWorker({ JOB_CONCURRENCY: "1", SYNC_PAGE_SIZE: "2" });
    const two = startWorker({ JOB_CONCURRENCY: "1", SYNC_PAGE_SIZE: "2" });
    await keepSending("sync.install", "schedule", installs.map((install) => install.installRowId), { runsEach: 2, pids: [one.child.pid, two.child.pid] });
    const done = await jobs("sync.install");
    for (const install of installs) {
      const runs = done.filter((job) => job.singleton_key === install.installRowId).sort((a, b) => a.started_on!.getTime() - b.started_on!.getTime());
      expect(runs.length).toBeGreaterThan(1);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.started_on!.getTime()).toBeGreaterThanOrEqual(runs[i - 1]!.completed_on!.getTime());
    }
    expect(new Set(done.map((job) => job.output?.pid))).toEqual(new Set([one.child.pid, two.child.pid]));
  }, scaled(120_000));
});
