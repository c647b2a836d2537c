// The connection budget (lib/db/connection-budget.ts) adds up the pools that exist: every module in
// lib/ that opens a connection to PostgreSQL is listed there, and takes its size from there.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { POOLS, processBudget, type PoolName } from "@/lib/db/connection-budget";

/** What opens connections: a pool, a client, pg-boss, or Prisma's adapter given a config (not a pool). */
const OPENS = /new\s+(pg\.Pool|pg\.Client|Pool|Client|PgBoss|PrismaPg)\s*\(/;

function sourcesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => path.relative(process.cwd(), path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith(path.join("lib", "db", "generated")));
}

const opening = new Map(
  sourcesUnder("lib")
    .map((file) => [file, readFileSync(file, "utf8")] as const)
    .filter(([, text]) => OPENS.test(text.replaceAll(/^\s*\/\/.*$/gm, ""))),
);

describe("the connection budget", () => {
  it("lists every module in lib/ that opens a connection, and nothing else", () => {
    const listed = new Set(Object.values(POOLS).map((pool) => pool.file));
    expect([...opening.keys()].sort()).toEqual([...listed].sort());
  });

  it("is where every pool in lib/ takes its size from", () => {
    for (const [file, text] of opening) {
      const sizes = [...text.matchAll(/\bmax:\s*([^,\n]+)/g)].map((match) => match[1]!.trim());
      for (const size of sizes) expect(`${file}: max: ${size}`).toMatch(/max: poolSize\(/);
    }
    // The pools sized by a setting name it: a hard-coded `max` would pass the line above only by accident.
    expect(opening.get("lib/db/client.ts")).toContain('poolSize("prisma", env())');
    expect(opening.get("lib/db/ingest-pool.ts")).toContain('poolSize("webhookIngest", config)');
  });

  it("adds up an app process and a worker process from their pools", () => {
    const defaults = { DATABASE_POOL_SIZE: 10, WEBHOOK_DATABASE_POOL_SIZE: 4 };
    expect(processBudget("app", defaults)).toEqual({
      total: 19,
      pools: { prisma: 10, webhookIngest: 4, signInLimits: 2, jobEngineApp: 2, refreshLock: 1 },
    });
    expect(processBudget("worker", defaults)).toEqual({ total: 15, pools: { prisma: 10, jobEngineWorker: 4, refreshLock: 1 } });
    // The formula docs/operations.md gives, for other settings.
    const settings = { DATABASE_POOL_SIZE: 25, WEBHOOK_DATABASE_POOL_SIZE: 7 };
    expect(processBudget("app", settings).total).toBe(25 + 7 + 5);
    expect(processBudget("worker", settings).total).toBe(25 + 5);
    // Every pool is counted in some process, or opened only by db:migrate.
    const counted = new Set<PoolName>([...Object.keys(processBudget("app", settings).pools), ...Object.keys(processBudget("worker", settings).pools)] as PoolName[]);
    for (const name of Object.keys(POOLS) as PoolName[]) expect(counted.has(name) || POOLS[name].opens === "db:migrate").toBe(true);
  });
});
