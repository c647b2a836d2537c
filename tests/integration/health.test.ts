// GET /api/health and GET /api/ready (lib/health.ts), for load balancers and orchestrators.
import { afterAll, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { closeSql, sql, stack } from "../helpers/stack";
import { startTcpProxy } from "../helpers/tcp-proxy";

afterAll(closeSql);

type ReadyBody = { status: string; checks: { database: string; migrations: string; tokenCircuit: string } };

describe("health and readiness", () => {
  it("/api/health answers without asking anything; /api/ready checks the database, migrations and circuit", async () => {
    const health = await fetch(`${stack.appUrl}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    const ready = await fetch(`${stack.appUrl}/api/ready`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
    expect(await ready.json()).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", tokenCircuit: "closed" } });
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
});
