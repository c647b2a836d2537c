// GET /api/health and GET /api/ready (lib/health.ts), for load balancers and orchestrators.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { applyMigrations } from "../../lib/db/migrate";
import { migrateJobSchema } from "../../lib/jobs/schema";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { freePort } from "../helpers/callback";
import { createScratchDatabase } from "../helpers/database";
import { closeSql, sql, stack } from "../helpers/stack";
import { startTcpProxy } from "../helpers/tcp-proxy";
import { scaled } from "../helpers/time-scale";

afterAll(closeSql);

const servers = new Set<ChildProcess>();
afterEach(() => {
  for (const child of servers) child.kill("SIGKILL");
  servers.clear();
});

/** The standalone server (as the image runs it) on a port of its own, with the stack's configuration but this database. */
async function startServerOn(databaseUrl: string): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.resolve(process.env.NEXT_DIST_DIR || ".next", "standalone", "server.js")], {
    env: { ...process.env, NODE_ENV: "production", PORT: String(port), HOSTNAME: "127.0.0.1", __NEXT_PROCESSED_ENV: "true", DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  servers.add(child);
  let output = "";
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; !(await fetch(`${url}/api/health`).catch(() => undefined))?.ok; i++) {
    if (i > 300 || child.exitCode !== null) throw new Error(`the server did not start: ${output.slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return url;
}

type Connections = { thisInstance: number; openHere: number; serverAllows: number; otherSessions: number; warning?: string };
type ReadyBody = { status: string; checks: { database: string; migrations: string; tokenCircuit: string }; details?: { connections: Connections } };

/** What the stack's PostgreSQL allows an ordinary role, and the client sessions open on it now. */
async function serverConnections(): Promise<{ allows: number; open: number }> {
  const [row] = await sql<{ allows: number; open: number }>(`
    SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
             - coalesce(current_setting('reserved_connections', true)::int, 0) AS allows,
           (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS open`);
  return row!;
}

describe("health and readiness", () => {
  it("/api/health answers without asking anything; /api/ready checks the database, migrations and circuit", async () => {
    const health = await fetch(`${stack.appUrl}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    const ready = await fetch(`${stack.appUrl}/api/ready`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
    expect(await ready.json()).toEqual({
      status: "ready",
      checks: { database: "ok", migrations: "ok", tokenCircuit: "closed" },
      // How far this process's clock is from the service's: tests/integration/clock-skew.test.ts.
      details: { connections: expect.any(Object), clock: expect.any(Object) },
    });
  });

  it("/api/ready's details give this instance's connection budget against what the server allows, and warn without failing when it does not fit", async () => {
    const server = await serverConnections();
    const body = (await (await fetch(`${stack.appUrl}/api/ready`)).json()) as ReadyBody;
    const connections = body.details!.connections;
    // 10 (Prisma) + 4 (webhook ingest) + 2 (sign-in limits) + 2 (job engine) + 1 (refresh lock), the defaults.
    expect(connections.thisInstance).toBe(19);
    expect(connections.serverAllows).toBe(server.allows);
    expect(connections.openHere).toBeGreaterThanOrEqual(1); // the check's own connection, at least
    expect(connections.openHere).toBeLessThanOrEqual(19);
    expect(connections.otherSessions).toBeGreaterThanOrEqual(1); // this test's own, at least
    expect(connections.warning).toBeUndefined();

    // A Prisma pool larger than the server allows, alone: ready, and warned.
    const tooLarge = resultOf<{ ready: boolean; details: { connections: Connections } }>(
      await runAppWorker(["ready"], { DATABASE_POOL_SIZE: String(server.allows) }),
    );
    expect(tooLarge.ready).toBe(true);
    expect(tooLarge.details.connections).toMatchObject({ thisInstance: server.allows + 9, serverAllows: server.allows });
    expect(tooLarge.details.connections.warning).toMatch(new RegExp(`may open ${server.allows + 9} connections, more than the ${server.allows} the server allows`));

    // One that fits alone (5 under) but not beside the other sessions open now (12 of this test's, at least).
    const others = Array.from({ length: 12 }, () => new pg.Client({ connectionString: stack.databaseUrl }));
    await Promise.all(others.map((client) => client.connect()));
    try {
      const crowded = resultOf<{ ready: boolean; details: { connections: Connections } }>(
        await runAppWorker(["ready"], { DATABASE_POOL_SIZE: String(server.allows - 14) }),
      );
      expect(crowded.ready).toBe(true);
      expect(crowded.details.connections.thisInstance).toBe(server.allows - 5);
      expect(crowded.details.connections.otherSessions).toBeGreaterThanOrEqual(12);
      expect(crowded.details.connections.warning).toMatch(/other sessions are open now, more than the \d+ the server allows/);
    } finally {
      await Promise.all(others.map((client) => client.end()));
    }
  });

  it("is unready while the database lacks a migration this code expects", async () => {
    const [newest] = await sql<Record<string, unknown>>("SELECT * FROM _prisma_migrations ORDER BY migration_name DESC LIMIT 1");
    await sql("DELETE FROM _prisma_migrations WHERE id = $1", [newest!.id]);
    try {
      const ready = await fetch(`${stack.appUrl}/api/ready`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as ReadyBody).checks).toMatchObject({ database: "ok", migrations: "pending" });
    } finally {
      const columns = Object.keys(newest!);
      await sql(
        `INSERT INTO _prisma_migrations (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`,
        columns.map((c) => newest![c]),
      );
    }
    expect((await fetch(`${stack.appUrl}/api/ready`)).status).toBe(200);
  });

  it("goes unready, quickly, when the database stops answering", async () => {
    const proxy = await startTcpProxy(new URL(stack.databaseUrl));
    try {
      const up = resultOf<{ ready: boolean; checks: ReadyBody["checks"] }>(await runAppWorker(["ready"], { DATABASE_URL: proxy.url }));
      expect(up).toMatchObject({ ready: true, checks: { database: "ok", migrations: "ok" } });

      proxy.cut();
      const down = resultOf<{ ready: boolean; checks: ReadyBody["checks"]; ms: number }>(await runAppWorker(["ready"], { DATABASE_URL: proxy.url }));
      expect(down).toMatchObject({ ready: false, checks: { database: "unavailable", migrations: "unknown", tokenCircuit: "unknown" } });
      expect(down.ms).toBeLessThan(5_000);
    } finally {
      await proxy.close();
    }
  });

  it("an app started on a database never migrated is unready (migrations pending) until `npm run db:migrate` has run, the job schema included", async () => {
    const database = await createScratchDatabase();
    try {
      const appUrl = await startServerOn(database.url);
      const readiness = async () => {
        const response = await fetch(`${appUrl}/api/ready`);
        return { status: response.status, body: (await response.json()) as ReadyBody };
      };
      // Empty: no _prisma_migrations table at all.
      expect(await readiness()).toMatchObject({ status: 503, body: { status: "unready", checks: { database: "ok", migrations: "pending" } } });

      // The app's migrations, as `npm run db:migrate` applies them (scripts/migrate.ts), but not yet the job engine's schema.
      await applyMigrations({ connectionString: database.url });
      expect(await readiness()).toMatchObject({ status: 503, body: { status: "unready", checks: { database: "ok", migrations: "pending" } } });

      await migrateJobSchema(database.url);
      expect(await readiness()).toMatchObject({ status: 200, body: { status: "ready", checks: { database: "ok", migrations: "ok", tokenCircuit: "closed" } } });
    } finally {
      for (const child of servers) child.kill("SIGKILL");
      await database.drop();
    }
  }, scaled(60_000));
});
