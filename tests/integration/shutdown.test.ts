// Graceful shutdown, bounded (lib/shutdown.ts): on SIGTERM the app and the worker take no new work,
// finish what is in flight, and exit by themselves; what hangs past SHUTDOWN_TIMEOUT_SECONDS is
// given up with an error line and a non-zero exit, before the platform's SIGKILL would end it silently.
//
// Each test runs its own process (never the stack's server, which the other tests need): the
// standalone server as the container image runs it, or scripts/worker.ts as `npm run worker` does.
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { freePort } from "../helpers/callback";
import { closeSql, control, installViaPortal, resetWorld, sql, stack } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(closeSql);

const STOPPING_LINE = /"msg":"stopping: no new work is taken; in-flight work has (\d+) s to finish"/;
const BOUND_LINE = /"level":50,.*"msg":"in-flight work did not finish within SHUTDOWN_TIMEOUT_SECONDS \((\d+) s\); exiting without it"/;

type Exit = { code: number | null; signal: NodeJS.Signals | null; atMs: number };
type Started = { child: ChildProcess; output: () => string; exited: Promise<Exit>; waitFor: (pattern: RegExp) => Promise<RegExpExecArray> };

const running = new Set<ChildProcess>();
afterEach(() => {
  // A failed test must not leave its process behind.
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  running.clear();
});

function track(child: ChildProcess): Started {
  running.add(child);
  let output = "";
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<Exit>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, atMs: performance.now() })));
  let exitedYet = false;
  void exited.then(() => (exitedYet = true));
  /** Resolves once the output matches: a fact the process reported, rather than a guess about time. */
  async function waitFor(pattern: RegExp): Promise<RegExpExecArray> {
    for (let waited = 0; waited < 15_000; waited += 25) {
      const match = pattern.exec(output);
      if (match) return match;
      if (exitedYet) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`the process never printed ${pattern}; its output:\n${output.slice(-3000)}`);
  }
  return { child, output: () => output, exited, waitFor };
}

/** The standalone server (as the image runs it) on a port of its own, with the stack's configuration. */
async function startServer(overrides: Record<string, string> = {}): Promise<Started & { port: number }> {
  const port = await freePort();
  const serverJs = path.resolve(process.env.NEXT_DIST_DIR || ".next", "standalone", "server.js");
  const started = track(
    spawn(process.execPath, [serverJs], {
      env: { ...process.env, NODE_ENV: "production", LOG_LEVEL: "info", PORT: String(port), HOSTNAME: "127.0.0.1", __NEXT_PROCESSED_ENV: "true", ...overrides },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  for (let i = 0; ; i++) {
    const health = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => undefined);
    if (health?.ok) break;
    if (i > 300) throw new Error(`the server did not start: ${started.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { ...started, port };
}

/** `npm run worker` without npm and tsx's own wrapper process, so the test's signal reaches the worker itself. */
function startWorker(overrides: Record<string, string> = {}): Started {
  const tsx = path.resolve("node_modules/tsx/dist/esm/index.mjs");
  return track(
    spawn(process.execPath, ["--conditions=react-server", "--import", tsx, "scripts/worker.ts"], {
      env: { ...process.env, LOG_LEVEL: "info", ...overrides },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
}

function signedDelivery(installId: number) {
  const body = JSON.stringify({
    id: `whd_${randomUUID()}`,
    type: "install.created",
    delivered_at: Math.floor(Date.now() / 1000),
    data: { install_id: installId, operator_id: 1001, slug: "northwind-charging" },
  });
  return { body: Buffer.from(body), signature: `sha256=${createHmac("sha256", stack.webhookSecret).update(body).digest("hex")}` };
}

type Answer = { status: number; body: string; reusedSocket: boolean };

function answerOf(request: http.ClientRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request.on("error", reject);
    request.on("response", (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode!, body, reusedSocket: request.reusedSocket }));
    });
  });
}

/**
 * A webhook delivery whose body arrives in two parts: the head and the first half now, the rest
 * when the test calls `finish`. One keep-alive connection (the agent's only socket) carries it.
 * `headRead` resolves once the server has read the head, so the request is under way: the client
 * asks for "100 Continue" (RFC 9110 §10.1.1), which Node's server sends when it has parsed the head.
 */
function deliverInTwoParts(port: number, agent: http.Agent, delivery: ReturnType<typeof signedDelivery>) {
  const request = http.request({
    host: "127.0.0.1",
    port,
    agent,
    method: "POST",
    path: "/api/webhooks",
    headers: {
      "Content-Type": "application/json",
      "Content-Length": delivery.body.length,
      "X-Volt-Signature": delivery.signature,
      Expect: "100-continue",
    },
  });
  const answer = answerOf(request);
  answer.catch(() => undefined); // the bound test never gets one
  const half = Math.floor(delivery.body.length / 2);
  const headRead = new Promise<void>((resolve) =>
    request.once("continue", () => {
      request.write(delivery.body.subarray(0, half));
      resolve();
    }),
  );
  request.flushHeaders();
  return { headRead, answer, finish: () => request.end(delivery.body.subarray(half)) };
}

/** Whether a new TCP connection to the port is accepted. */
function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

type TokenStats = { calls: { refresh_token: number }; refreshes_issued: number; refreshes_in_flight: number; chain_revocations: number };
const tokenStats = () => control<TokenStats>("GET", "/token-stats");

describe("the app on SIGTERM", () => {
  it("finishes a webhook delivery under way, refuses new connections, says stopping on /api/ready, and exits by itself", async () => {
    const server = await startServer();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const delivery = signedDelivery(7301);
    const delivering = deliverInTwoParts(server.port, agent, delivery);
    await delivering.headRead;

    const signalledAt = performance.now();
    server.child.kill("SIGTERM");
    const [, seconds] = await server.waitFor(STOPPING_LINE);
    expect(Number(seconds)).toBe(25); // the default bound, announced

    // No new connection is taken...
    expect(await connects(server.port)).toBe(false);
    // ...but the delivery under way is read to its end and answered: the service never retries one (contract §6).
    delivering.finish();
    expect(await delivering.answer).toMatchObject({ status: 200 });

    // The same keep-alive connection, still open while the server drains, learns that it is stopping.
    const ready = await answerOf(http.request({ host: "127.0.0.1", port: server.port, agent, path: "/api/ready" }).end());
    expect(ready.reusedSocket).toBe(true);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toEqual({ status: "stopping" });
    agent.destroy();

    // Nothing more in flight: Next.js's own handler exits (143 = terminated by SIGTERM, drained), well inside the bound.
    const exit = await server.exited;
    expect(exit).toMatchObject({ code: 143, signal: null });
    expect(exit.atMs - signalledAt).toBeLessThan(25_000);
    expect(server.output()).not.toMatch(BOUND_LINE);

    // Recorded exactly once.
    const rows = await sql<{ event_type: string }>("SELECT event_type FROM webhook_deliveries WHERE install_id = $1", [7301]);
    expect(rows).toEqual([{ event_type: "install.created" }]);
  });

  it("gives up a request that never completes after SHUTDOWN_TIMEOUT_SECONDS, exits 1 and says why", async () => {
    // The body's own read deadline (9 s) is far longer than the bound (1 s): only the bound can end it.
    const server = await startServer({ SHUTDOWN_TIMEOUT_SECONDS: "1", WEBHOOK_READ_TIMEOUT_MS: "9000", WEBHOOK_RECORD_DEADLINE_MS: "9500" });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const delivery = signedDelivery(7302);
    await deliverInTwoParts(server.port, agent, delivery).headRead; // the rest never comes

    const signalledAt = performance.now();
    server.child.kill("SIGTERM");
    const exit = await server.exited;
    agent.destroy();
    expect(exit).toMatchObject({ code: 1, signal: null });
    // About the bound: not before it, and well before the body's own deadline would have ended the request.
    expect(exit.atMs - signalledAt).toBeGreaterThanOrEqual(1_000);
    expect(exit.atMs - signalledAt).toBeLessThan(1_000 + 3_000);
    expect(BOUND_LINE.exec(server.output())?.[1]).toBe("1");

    expect(await sql("SELECT 1 FROM webhook_deliveries WHERE install_id = $1", [7302])).toEqual([]);
  });

  it("stopped in the middle of a refresh whose page was given up: the refresh's result is committed before the exit", async () => {
    const server = await startServer();
    const { installRowId, sessionCookie } = await installViaPortal(1001);
    // The visit refreshes first (the app's record says the token expired) and checks the install (its last look is old).
    await sql("UPDATE token_grants SET access_token_expires_at = now() - interval '1 minute' WHERE install_row_id = $1", [installRowId]);
    await sql("UPDATE installs SET last_reconciled_at = NULL WHERE id = $1", [installRowId]);
    await control("POST", "/faults", { tokenEndpoint: { mode: "delay", count: 1, delayMs: 3_000 } });

    const visit = new AbortController();
    const page = fetch(`http://127.0.0.1:${server.port}/dashboard`, { headers: { cookie: sessionCookie }, signal: visit.signal }).catch(() => undefined);
    await tokenStatsWhen((s) => s.refreshes_in_flight > 0, "the refresh in flight");
    // The browser goes away (no request is left to drain), then the platform stops the app.
    visit.abort();
    await page;
    server.child.kill("SIGTERM");
    expect(await server.exited).toMatchObject({ code: 143, signal: null });

    expect((await tokenStats()).refreshes_issued).toBe(1);
    const [grant] = await sql<{ version: number; refresh_started_at: Date | null }>("SELECT version, refresh_started_at FROM token_grants WHERE install_row_id = $1", [installRowId]);
    expect(grant).toEqual({ version: 2, refresh_started_at: null });
    const [install] = await sql<{ status: string }>("SELECT status FROM installs WHERE id = $1", [installRowId]);
    expect(install!.status).toBe("ACTIVE");
  });
});


/** Polls the sandbox's token statistics until `condition` holds (or fails after 15 s, saying what it waited for). */
async function tokenStatsWhen(condition: (stats: TokenStats) => boolean, what: string): Promise<TokenStats> {
  for (let waited = 0; waited < 15_000; waited += 25) {
    const stats = await tokenStats();
    if (condition(stats)) return stats;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the sandbox never saw ${what}`);
}

/** Installs whose refresh tokens the keep-alive job finds due (a day from expiry, in the app's books). */
async function installsDueForKeepAlive(count: number) {
  const installs = [];
  for (let i = 0; i < count; i++) installs.push(await installViaPortal(1001 + i, { clientAddress: `198.51.100.${i + 1}` }));
  await sql("UPDATE token_grants SET refresh_token_expires_at = now() + interval '1 day' WHERE install_row_id = ANY($1)", [
    installs.map((install) => install.installRowId),
  ]);
  return installs;
}

/** The worker's jobs of one queue, by state (pg-boss's table, lib/jobs/queues.ts). */
async function jobStates(queue: string) {
  const rows = await sql<{ state: string; count: number }>("SELECT state::text, count(*)::int FROM pgboss.job WHERE name = $1 GROUP BY state ORDER BY state", [queue]);
  return Object.fromEntries(rows.map((row) => [row.state, row.count]));
}

describe("the worker on SIGTERM", () => {
  it("idle between jobs: announces the bound and exits 0 at once", async () => {
    const worker = startWorker();
    // Both fan-outs ran at start (nothing due) and the worker is waiting for the next schedule.
    await worker.waitFor(/"msg":"keep-alive fan-out enqueued the due installs"/);
    await worker.waitFor(/"msg":"reconcile fan-out enqueued the due installs"/);
    worker.child.kill("SIGTERM");
    expect(Number((await worker.waitFor(STOPPING_LINE))[1])).toBe(25);
    expect(await worker.exited).toMatchObject({ code: 0, signal: null });
    expect(worker.output()).toMatch(/"msg":"worker stopped"/);
  });

  it("in the middle of keep-alive: finishes the refresh under way, starts no other, and exits 0", async () => {
    const installs = await installsDueForKeepAlive(3);
    // The identity provider holds each refresh for 3 s, so the signal lands while one is under way.
    await control("POST", "/faults", { tokenEndpoint: { mode: "delay", count: 3, delayMs: 3_000 } });
    // One job at a time (keep-alive runs KEEP_ALIVE_CONCURRENCY at once, 25 by default), so that one refresh is under way and two wait.
    const worker = startWorker({ KEEP_ALIVE_CONCURRENCY: "1" });
    const stats = await tokenStatsWhen((s) => s.refreshes_in_flight > 0 || s.refreshes_issued > 0, "a refresh");
    expect(stats).toMatchObject({ refreshes_in_flight: 1, refreshes_issued: 0 });
    worker.child.kill("SIGTERM");

    expect(await worker.exited).toMatchObject({ code: 0, signal: null });
    // One refresh, finished and stored; the other installs wait for the next run, untouched.
    expect(await tokenStats()).toMatchObject({ calls: { refresh_token: 1 }, refreshes_issued: 1, refreshes_in_flight: 0, chain_revocations: 0 });
    const grants = await sql<{ version: number; refresh_started_at: Date | null }>(
      "SELECT version, refresh_started_at FROM token_grants WHERE install_row_id = ANY($1) ORDER BY version DESC",
      [installs.map((install) => install.installRowId)],
    );
    expect(grants).toEqual([
      { version: 2, refresh_started_at: null },
      { version: 1, refresh_started_at: null },
      { version: 1, refresh_started_at: null },
    ]);
    // And no further job started: the other two installs' jobs wait in the queue for the next worker.
    expect(await jobStates("keep-alive.install")).toEqual({ created: 2, completed: 1 });
  });

  it("a refresh that hangs past SHUTDOWN_TIMEOUT_SECONDS: exits 1, naming the job, and the refresh stays marked for settling", async () => {
    const [install] = await installsDueForKeepAlive(1);
    // The identity provider holds the refresh for 5 s, far past the 1-second bound.
    await control("POST", "/faults", { tokenEndpoint: { mode: "delay", count: 1, delayMs: 5_000 } });
    const worker = startWorker({ SHUTDOWN_TIMEOUT_SECONDS: "1" });
    await tokenStatsWhen((s) => s.refreshes_in_flight > 0, "the refresh");

    const signalledAt = performance.now();
    worker.child.kill("SIGTERM");
    const exit = await worker.exited;
    expect(exit).toMatchObject({ code: 1, signal: null });
    expect(exit.atMs - signalledAt).toBeGreaterThanOrEqual(1_000);
    expect(exit.atMs - signalledAt).toBeLessThan(1_000 + 3_000);
    expect(worker.output()).toMatch(/"level":50,.*"job":"[^"]*keep-alive[^"]*".*SHUTDOWN_TIMEOUT_SECONDS \(1 s\)/);

    // The identity provider completes the rotation anyway (and this test waits for it, so that it
    // cannot land in the next test): the outcome is unknown to the app, exactly as after a crash. The
    // marker committed before sending stays, so the next run settles it before anything is sent
    // again (lib/oauth/refresh.ts); nothing was sent twice.
    const after = await tokenStatsWhen((s) => s.refreshes_in_flight === 0, "the held refresh complete");
    expect(after).toMatchObject({ calls: { refresh_token: 1 }, refreshes_issued: 1, chain_revocations: 0 });
    const [grant] = await sql<{ version: number; refresh_started_at: Date | null }>(
      "SELECT version, refresh_started_at FROM token_grants WHERE install_row_id = $1",
      [install!.installRowId],
    );
    expect(grant!.version).toBe(1);
    expect(grant!.refresh_started_at).not.toBeNull();
  });
});
