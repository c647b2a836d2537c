// `npm run bench -- scale-out`: three app processes behind a round-robin proxy, two workers, one PostgreSQL.
//
// What a partner who outgrows one process runs (compose.yaml, docs/operations.md "Scaling"), all at
// once against the stack's one PostgreSQL (max_connections as the server reports it):
//  - webhooks: BENCH_SCALE_DELIVERIES first-time install.created at concurrency 64, spread over the
//    three processes by the proxy, each answer timed by the client (the service counts an answer after
//    10 s as a failure, contract §6);
//  - a refresh storm: the storm section's 50 installs expiring together, 4 dashboards each, spread over
//    the three processes, the identity provider slowed to 1 s (one refresh per install across processes);
//  - keep-alive: BENCH_SCALE_KEEPALIVE_INSTALLS installs all due, refreshed by two workers.
// A sampler reads pg_stat_activity every 50 ms meanwhile. Printed per repetition: the peak of client
// connections against max_connections (and who held them, by application_name), the storm's token
// calls (50 expected: one per install), the token calls that stored no new grant, chain revocations,
// failed pages, and the deliveries answered 2xx, 503, otherwise, and after 10 s.
// Counts are behaviour (the same on any machine); the times are this machine's.
import http from "node:http";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { type BenchContext, REPS, STORM_INSTALLS, dashboardPageFailed, loadNow, printSpread, startAppReplica } from "./lib";
import { startProcess, stopProcess } from "../lib/processes";
import { bulkInstalls, closeSql, control, installViaPortal, sql, storeBulkInstalls } from "../../tests/helpers/stack";
import { WEBHOOK_SIGNATURE_HEADER, computeWebhookSignature } from "../../lib/webhooks/signature";

const REPLICAS = 3;
const WORKERS = 2;
const PAGES_PER_INSTALL = 4;
const WEBHOOK_CONCURRENCY = 64;
const IDP_LATENCY_MS = 1_000;
/** The service's deadline for a webhook answer (contract §6). */
const DEADLINE_MS = 10_000;
const DELIVERIES = wholeNumber("BENCH_SCALE_DELIVERIES", 3_000, 100, 50_000);
const KEEPALIVE_INSTALLS = wholeNumber("BENCH_SCALE_KEEPALIVE_INSTALLS", 2_000, 100, 20_000);

function wholeNumber(name: string, fallback: number, min: number, max: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`bench: ${name} must be a whole number from ${min} to ${max}`);
    process.exit(2);
  }
  return value;
}

/**
 * A round-robin HTTP load balancer on loopback: each request to the next process in turn, on a
 * keep-alive agent per process. Written here because it is twenty lines for the bench alone; a
 * deployment puts its own load balancer there.
 */
async function startRoundRobin(upstreams: string[], port: number): Promise<{ url: string; close: () => Promise<void> }> {
  const agents = upstreams.map(() => new http.Agent({ keepAlive: true, maxSockets: 512 }));
  let next = 0;
  const server = http.createServer((request, response) => {
    const n = next++ % upstreams.length;
    const forward = http.request(new URL(request.url!, upstreams[n]), { method: request.method, headers: request.headers, agent: agents[n] }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    forward.on("error", () => (response.headersSent ? response.destroy() : response.writeHead(502).end()));
    request.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(port, "localhost", resolve));
  return {
    url: `http://localhost:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const agent of agents) agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Samples client connections every 50 ms until stopped: the peak, and who held the most at that moment. */
function connectionSampler(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "bench sampler" });
  let peak = 0;
  let atPeak: { name: string; count: number }[] = [];
  let running = true;
  const done = (async () => {
    await client.connect();
    while (running) {
      const rows = (
        await client.query<{ name: string; count: number }>(
          `SELECT coalesce(nullif(application_name, ''), '(unnamed)') AS name, count(*)::int AS count FROM pg_stat_activity
           WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1 ORDER BY 2 DESC`,
        )
      ).rows;
      const total = rows.reduce((sum, row) => sum + row.count, 0);
      if (total > peak) [peak, atPeak] = [total, rows];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await client.end();
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return { peak, atPeak };
    },
  };
}

/** POSTs one signed first-time install.created; resolves with its status (0: no answer) and the client's time. */
function deliver(url: URL, agent: http.Agent, installId: number, secret: string): Promise<{ status: number; ms: number }> {
  const body = JSON.stringify({
    id: `whd_scale_${installId}`,
    type: "install.created",
    delivered_at: Math.floor(Date.now() / 1000),
    data: { install_id: installId, operator_id: installId, slug: `scale-${installId}` },
  });
  const signature = computeWebhookSignature(new TextEncoder().encode(body), secret);
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number) => resolve({ status, ms: performance.now() - started });
    const request = http.request(
      url,
      { method: "POST", agent, headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), [WEBHOOK_SIGNATURE_HEADER]: signature } },
      (response) => {
        response.resume();
        response.on("end", () => done(response.statusCode ?? 0));
        response.on("error", () => done(0));
      },
    );
    request.on("error", () => done(0));
    request.end(body);
  });
}

/** The answers neither 2xx nor 503, by status (0: no HTTP answer), as " (0 x3, 500 x1)"; empty when there are none. */
function otherStatuses(answers: { status: number }[]): string {
  const counts = new Map<number, number>();
  for (const { status } of answers) if (status !== 503 && (status < 200 || status >= 300)) counts.set(status, (counts.get(status) ?? 0) + 1);
  return counts.size ? ` (${[...counts].map(([status, n]) => `${status} x${n}`).join(", ")})` : "";
}

type Stats = { calls: { refresh_token: number }; chain_revocations: number };

export async function scaleOut({ stack, offset, dataDir }: BenchContext) {
  const [{ max }] = (await sql<{ max: number }>("SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int AS max")) as [{ max: number }];
  console.log(
    `\n== scale-out: ${REPLICAS} app processes behind a round-robin proxy, ${WORKERS} workers, one PostgreSQL (${max} connections for clients);` +
      ` at once: ${DELIVERIES.toLocaleString("en-US")} webhooks at c=${WEBHOOK_CONCURRENCY}, a storm of ${STORM_INSTALLS} installs x ${PAGES_PER_INSTALL} pages` +
      ` (identity provider ${IDP_LATENCY_MS} ms), keep-alive over ${KEEPALIVE_INSTALLS.toLocaleString("en-US")} installs; ${REPS} repetitions ==`,
  );
  const replicas: { url: string; stop: () => Promise<void> }[] = [{ url: stack.env.APP_URL!, stop: async () => {} }];
  for (let n = 1; n < REPLICAS; n++) replicas.push(await startAppReplica(stack, offset, n));
  const proxy = await startRoundRobin(
    replicas.map((replica) => replica.url),
    3450 + offset,
  );
  const storm = [];
  for (let i = 0; i < STORM_INSTALLS; i++) storm.push(await installViaPortal(1004 + i));
  const stormRowIds = storm.map((install) => install.installRowId);
  const kept = await storeBulkInstalls(await bulkInstalls({ count: KEEPALIVE_INSTALLS, charges: 0 }));
  const versions = async () =>
    new Map(
      (await sql<{ install_row_id: string; version: number }>("SELECT install_row_id, version FROM token_grants WHERE install_row_id = ANY($1::uuid[])", [[...stormRowIds, ...kept]])).map((row) => [
        row.install_row_id,
        row.version,
      ]),
    );
  let nextInstallId = 3_000_000 + Math.floor(Math.random() * 100_000) * 1_000;

  const peaks: number[] = [];
  const loads: number[] = [];
  try {
    for (let rep = 0; rep < REPS; rep++) {
      await sql("TRUNCATE pgboss.job");
      await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day' WHERE install_row_id = ANY($1::uuid[])", [kept]);
      const before = { stats: await control<Stats>("GET", "/token-stats"), versions: await versions() };
      await control("POST", "/faults", { tokenEndpoint: { mode: "delay", count: 100_000, delayMs: IDP_LATENCY_MS } });
      const sampler = connectionSampler(stack.env.DATABASE_URL!);
      const workers = Array.from({ length: WORKERS }, (_, n) =>
        startProcess(`scale-worker-${n}`, path.resolve("node_modules/.bin/tsx"), ["--conditions=react-server", "scripts/worker.ts"], {
          // Keep-alive only: a sync would refresh the storm's installs too, and blur its count.
          env: { ...stack.env, LOG_LEVEL: "warn", WORKER_JOBS: "keep-alive" },
          quiet: true,
          logFile: path.join(dataDir, "logs", `scale-out-worker-${rep}-${n}.log`),
        }),
      );
      // The storm and the webhooks start once keep-alive's fan-out has begun.
      for (let waited = 0; waited < 120_000; waited += 100) {
        const [row] = await sql<{ jobs: number }>("SELECT count(*)::int AS jobs FROM pgboss.job WHERE name = 'keep-alive.install'");
        if (row!.jobs > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await sql("UPDATE token_grants SET access_token_expires_at = now() - interval '1 minute' WHERE install_row_id = ANY($1)", [stormRowIds]);
      const started = performance.now();
      const pages = Promise.all(
        storm.flatMap((install) =>
          Array.from({ length: PAGES_PER_INSTALL }, async () => {
            const response = await fetch(`${proxy.url}/dashboard/charge-points`, { headers: { cookie: install.sessionCookie } });
            return dashboardPageFailed(response.status, await response.text());
          }),
        ),
      ).then((failed) => ({ failed: failed.filter(Boolean).length, lastS: (performance.now() - started) / 1000 }));
      const agent = new http.Agent({ keepAlive: true, maxSockets: WEBHOOK_CONCURRENCY });
      const answers: { status: number; ms: number }[] = [];
      const webhookUrl = new URL(`${proxy.url}/api/webhooks`);
      await Promise.all(
        Array.from({ length: WEBHOOK_CONCURRENCY }, async () => {
          while (answers.length < DELIVERIES) {
            const slot = answers.length;
            answers.push({ status: -1, ms: 0 });
            answers[slot] = await deliver(webhookUrl, agent, nextInstallId++, stack.env.WEBHOOK_SECRET!);
          }
        }),
      );
      agent.destroy();
      const stormRun = await pages;
      // SIGTERM: the workers finish the refreshes in hand, then exit.
      await Promise.all(workers.map((worker) => stopProcess(worker, 40_000)));
      const { peak, atPeak } = await sampler.stop();
      await control("DELETE", "/faults");
      const after = { stats: await control<Stats>("GET", "/token-stats"), versions: await versions() };
      const newGrants = (rowIds: string[]) => rowIds.reduce((sum, id) => sum + (after.versions.get(id)! - before.versions.get(id)!), 0);
      const tokenCalls = after.stats.calls.refresh_token - before.stats.calls.refresh_token;
      const stored = newGrants(stormRowIds) + newGrants(kept);
      const count = (test: (answer: { status: number; ms: number }) => boolean) => answers.filter(test).length;
      peaks.push(peak);
      loads.push(loadNow());
      console.log(
        `\nrepetition ${rep + 1}: peak client connections ${peak} of ${max} (${atPeak.map((row) => `${row.name}: ${row.count}`).join(", ")})` +
          `\n  storm: refreshes of its installs ${newGrants(stormRowIds)} (${STORM_INSTALLS} expected: one each), failed pages ${stormRun.failed} of ${storm.length * PAGES_PER_INSTALL},` +
          ` last page after ${stormRun.lastS.toFixed(2)} s` +
          `\n  token calls ${tokenCalls} for ${stored} new grants stored (storm and keep-alive; a difference is a call whose answer was lost), chain revocations ${after.stats.chain_revocations - before.stats.chain_revocations}` +
          `\n  webhooks: ${count((a) => a.status >= 200 && a.status < 300)} 2xx, ${count((a) => a.status === 503)} 503, ${count((a) => a.status !== 503 && (a.status < 200 || a.status >= 300))} other${otherStatuses(answers)},` +
          ` ${count((a) => a.ms > DEADLINE_MS)} answered after ${DEADLINE_MS / 1000} s by the client's clock (slowest ${(Math.max(...answers.map((a) => a.ms)) / 1000).toFixed(1)} s)` +
          `\n  load ${loads.at(-1)!.toFixed(2)}`,
      );
    }
    printSpread("peak client connections", peaks, "", loads, 0);
  } finally {
    await proxy.close();
    for (const replica of replicas.slice(1)) await replica.stop();
    await closeSql();
  }
}
