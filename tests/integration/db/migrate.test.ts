// lib/db/migrate.ts keeps Prisma's _prisma_migrations bookkeeping exactly, so that
// `prisma migrate deploy/status` agree with it on machines that have Prisma's schema engine.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_MIGRATIONS_DIR, applyMigrations } from "../../../lib/db/migrate";
import { createScratchDatabase, type ScratchDatabase } from "../../helpers/database";

interface MigrationRow {
  id: string;
  checksum: string;
  migration_name: string;
  started_at: Date;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  logs: string | null;
  applied_steps_count: number;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scratch(): Promise<ScratchDatabase> {
  const database = await createScratchDatabase();
  cleanups.push(database.drop);
  return database;
}

/** A private copy of prisma/migrations that a test may edit. */
async function copyOfMigrations(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "migrations-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await cp(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

async function query<R extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

const migrationRows = (url: string) =>
  query<MigrationRow>(url, "SELECT * FROM _prisma_migrations ORDER BY migration_name");

async function migrationNames(dir = DEFAULT_MIGRATIONS_DIR): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

/** Computed here independently of the runner: sha256 of the file's bytes, lowercase hex. */
async function fileChecksum(dir: string, name: string): Promise<string> {
  return createHash("sha256").update(await readFile(path.join(dir, name, "migration.sql"))).digest("hex");
}

describe("applyMigrations", () => {
  it("applies every migration to an empty database and records it as Prisma does", async () => {
    const { url } = await scratch();
    const names = await migrationNames();
    expect(names.length).toBeGreaterThan(0);

    const result = await applyMigrations({ connectionString: url });

    expect(result).toEqual({ applied: names, alreadyApplied: [] });
    const rows = await migrationRows(url);
    expect(rows.map((row) => row.migration_name)).toEqual(names);
    for (const row of rows) {
      expect(row.checksum).toBe(await fileChecksum(DEFAULT_MIGRATIONS_DIR, row.migration_name));
      expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }

    // The table has Prisma's exact shape (schema engine, postgres connector).
    const columns = await query<{ column_name: string; data_type: string; is_nullable: string; len: number | null }>(
      url,
      `SELECT column_name, data_type, is_nullable, character_maximum_length AS len
         FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns.map((c) => [c.column_name, c.data_type, c.is_nullable, c.len])).toEqual([
      ["id", "character varying", "NO", 36],
      ["checksum", "character varying", "NO", 64],
      ["finished_at", "timestamp with time zone", "YES", null],
      ["migration_name", "character varying", "NO", 255],
      ["logs", "text", "YES", null],
      ["rolled_back_at", "timestamp with time zone", "YES", null],
      ["started_at", "timestamp with time zone", "NO", null],
      ["applied_steps_count", "integer", "NO", null],
    ]);

    // And the schema itself is there.
    const tables = await query<{ table_name: string }>(
      url,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
    );
    // The synced resources' tables are the registry's (lib/sync/resources.ts), so a fork's new
    // resource adds its table there and nowhere in this test.
    const { SYNCED_RESOURCES } = await import("@/lib/sync/resources");
    const synced = SYNCED_RESOURCES.map((resource) => resource.table as string);
    expect(tables.map((t) => t.table_name).filter((name) => !synced.includes(name))).toEqual([
      "_prisma_migrations",
      "alert_digest_members",
      "alert_digests",
      "alert_incidents",
      "api_budgets",
      "authorization_code_claims",
      "install_events",
      "installs",
      "issuer_facts",
      "oauth_client_health",
      "pending_sign_ins",
      "rate_limits",
      "refresh_attempts",
      "retention_purges",
      "sessions",
      "staff_actions",
      "sync_checkpoints",
      "sync_days",
      "sync_latest",
      "sync_runs",
      "token_grants",
      "webhook_deliveries",
      "webhook_rejections",
    ]);
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(synced));
  });

  it("applies nothing the second time", async () => {
    const { url } = await scratch();
    const names = await migrationNames();
    await applyMigrations({ connectionString: url });
    const before = await migrationRows(url);

    const second = await applyMigrations({ connectionString: url });

    expect(second).toEqual({ applied: [], alreadyApplied: names });
    expect(await migrationRows(url)).toEqual(before);
  });

  it("applies each migration exactly once when two runners start together (advisory lock)", async () => {
    const { url } = await scratch();
    const names = await migrationNames();

    const [a, b] = await Promise.all([applyMigrations({ connectionString: url }), applyMigrations({ connectionString: url })]);

    expect([...a.applied, ...b.applied].sort()).toEqual(names);
    // The runner that waited for the lock found everything done.
    expect([a.alreadyApplied, b.alreadyApplied]).toContainEqual(names);
    expect((await migrationRows(url)).map((row) => row.migration_name)).toEqual(names);
  });

  it("applies each migration exactly once when three instances run `npm run db:migrate` at once", async () => {
    const { url } = await scratch();
    const names = await migrationNames();
    const runMigrate = () =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        // node --import tsx keeps it one OS process, as `npm run db:migrate` runs scripts/migrate.ts.
        const child = spawn(process.execPath, ["--import", path.resolve("node_modules/tsx/dist/esm/index.mjs"), "scripts/migrate.ts"], {
          env: { ...process.env, DATABASE_URL: url },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
        child.on("exit", (code) => resolve({ code, output }));
      });

    const runs = await Promise.all([runMigrate(), runMigrate(), runMigrate()]);

    expect(runs.map((run) => run.code)).toEqual([0, 0, 0]);
    // One process applied them all; the others waited for its lock and found the database up to date.
    expect(runs.filter((run) => run.output.includes(`applied ${names.length} migration(s)`))).toHaveLength(1);
    expect(runs.filter((run) => run.output.includes("the database is up to date"))).toHaveLength(2);
    expect((await migrationRows(url)).map((row) => row.migration_name)).toEqual(names);
  });

  it("refuses to continue when an applied migration was edited", async () => {
    const { url } = await scratch();
    const dir = await copyOfMigrations();
    const [first] = await migrationNames(dir);
    await applyMigrations({ connectionString: url, migrationsDir: dir });
    const file = path.join(dir, first!, "migration.sql");
    await writeFile(file, `${await readFile(file, "utf8")}\n-- edited after it was applied\n`);

    await expect(applyMigrations({ connectionString: url, migrationsDir: dir })).rejects.toThrow(
      new RegExp(`Migration ${first} was modified after it was applied`),
    );
  });

  it("accepts an applied migration whose line endings git changed to CRLF, as Prisma does", async () => {
    const { url } = await scratch();
    const dir = await copyOfMigrations();
    const names = await migrationNames(dir);
    await applyMigrations({ connectionString: url, migrationsDir: dir });
    for (const name of names) {
      const file = path.join(dir, name, "migration.sql");
      await writeFile(file, (await readFile(file, "utf8")).replaceAll("\n", "\r\n"));
    }

    expect(await applyMigrations({ connectionString: url, migrationsDir: dir })).toEqual({
      applied: [],
      alreadyApplied: names,
    });
  });

  it("refuses to run while a previous migration is recorded as failed", async () => {
    const { url } = await scratch();
    await applyMigrations({ connectionString: url });
    await query(
      url,
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count, logs)
       VALUES (gen_random_uuid()::text, $1, '29990101000000_broken', now(), 0, 'boom')`,
      ["0".repeat(64)],
    );

    await expect(applyMigrations({ connectionString: url })).rejects.toThrow(/29990101000000_broken failed earlier/);
  });

  it("rolls a failing migration back completely and records nothing for it", async () => {
    const { url } = await scratch();
    const dir = await copyOfMigrations();
    const names = await migrationNames(dir);
    const broken = "29990101000000_broken";
    await mkdir(path.join(dir, broken));
    await writeFile(
      path.join(dir, broken, "migration.sql"),
      'CREATE TABLE "half_done" ("id" INTEGER);\nSELECT * FROM "no_such_table";\n',
    );

    await expect(applyMigrations({ connectionString: url, migrationsDir: dir })).rejects.toThrow(
      /29990101000000_broken failed and was rolled back: .*no_such_table/,
    );

    expect((await migrationRows(url)).map((row) => row.migration_name)).toEqual(names);
    const halfDone = await query<{ exists: boolean }>(url, "SELECT to_regclass('half_done') IS NOT NULL AS exists");
    expect(halfDone[0]?.exists).toBe(false);
  });
});
