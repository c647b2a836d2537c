// Applies prisma/migrations to a database, keeping Prisma Migrate's own bookkeeping.
//
// Why not `prisma migrate deploy`: Prisma's schema engine, which runs every `prisma migrate`
// command, is a native binary that `npm install` downloads from Prisma's servers. Offline or
// locked-down machines (our CI among them, see ENVIRONMENT.md) cannot reach them, so the command
// cannot run there. The migrations themselves are still ordinary Prisma migrations.
//
// This runner is deliberately small: it only applies migration.sql files, in name order, the way
// Prisma does, and records them in the same `_prisma_migrations` table (same columns, same sha256
// checksum, same advisory lock). So on a machine that has the engine, `prisma migrate status` and
// `prisma migrate deploy` agree with it, and you can switch to them at any time. Creating
// migrations is still `prisma migrate dev` on such a machine.
//
// Not server-only on purpose: scripts/migrate.ts and the tests use it outside Next.js.
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { PRODUCT } from "../config/product";
import { POOLS } from "./connection-budget";

/** The advisory lock key Prisma Migrate takes, so this runner and Prisma never run at once. */
export const PRISMA_MIGRATE_LOCK_ID = 72707369;
/** Prisma gives up on the lock after 10 s too. */
const LOCK_TIMEOUT = "10s";

export const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL("../../prisma/migrations/", import.meta.url));

// Prisma's own definition (schema engine, postgres connector), so Prisma reads our rows as its own.
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE _prisma_migrations (
    id                      VARCHAR(36) PRIMARY KEY NOT NULL,
    checksum                VARCHAR(64) NOT NULL,
    finished_at             TIMESTAMPTZ,
    migration_name          VARCHAR(255) NOT NULL,
    logs                    TEXT,
    rolled_back_at          TIMESTAMPTZ,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    applied_steps_count     INTEGER NOT NULL DEFAULT 0
);`;

export interface ApplyMigrationsOptions {
  connectionString: string;
  /** Defaults to this repository's prisma/migrations. */
  migrationsDir?: string;
  log?: (line: string) => void;
}

export interface ApplyMigrationsResult {
  /** Migrations applied by this call, in order. */
  applied: string[];
  /** Migrations found already applied. */
  alreadyApplied: string[];
}

interface MigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

interface LocalMigration {
  name: string;
  script: string;
  checksum: string;
}

export async function applyMigrations(opts: ApplyMigrationsOptions): Promise<ApplyMigrationsResult> {
  const log = opts.log ?? (() => {});
  const migrationsDir = opts.migrationsDir ?? DEFAULT_MIGRATIONS_DIR;
  const local = await readMigrations(migrationsDir);

  const client = new pg.Client({ connectionString: opts.connectionString, application_name: PRODUCT.postgresApplicationName(POOLS.migrations.purpose) });
  await client.connect();
  try {
    // Prisma URLs may name a schema (`?schema=...`); node-postgres ignores that parameter.
    const schema = new URL(opts.connectionString).searchParams.get("schema");
    if (schema) await client.query(`SET search_path TO ${client.escapeIdentifier(schema)}`);

    await client.query(`SET lock_timeout = '${LOCK_TIMEOUT}'`);
    try {
      await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK_ID]);
    } catch (error) {
      throw new Error(
        `Could not take the migration lock (pg_advisory_lock(${PRISMA_MIGRATE_LOCK_ID})) within ${LOCK_TIMEOUT}: ` +
          `another migration run holds it. ${describe(error)}`,
      );
    }
    await client.query("RESET lock_timeout");

    try {
      return await applyPending(client, local, log);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK_ID]);
    }
  } finally {
    await client.end();
  }
}

async function applyPending(
  client: pg.Client,
  local: LocalMigration[],
  log: (line: string) => void,
): Promise<ApplyMigrationsResult> {
  const { rows: tableExists } = await client.query<{ exists: boolean }>(
    "SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists",
  );
  if (!tableExists[0]?.exists) {
    await client.query(CREATE_MIGRATIONS_TABLE);
    log("created the _prisma_migrations table");
  }

  const { rows } = await client.query<MigrationRow>(
    "SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY started_at",
  );

  // Like Prisma (P3009): a failed migration must be resolved by a person before anything else runs.
  const failed = rows.filter((row) => row.finished_at === null && row.rolled_back_at === null);
  if (failed.length > 0) {
    throw new Error(
      `Migration ${failed.map((row) => row.migration_name).join(", ")} failed earlier and was not resolved, ` +
        "so no new migration is applied. Inspect the database, then mark it with " +
        "`prisma migrate resolve --rolled-back <name>` (or --applied), or delete its row from _prisma_migrations.",
    );
  }

  const applied = new Map<string, MigrationRow>();
  for (const row of rows) {
    if (row.finished_at !== null && row.rolled_back_at === null) applied.set(row.migration_name, row);
  }

  // An applied migration whose file changed means this database and the files disagree about the
  // schema: refuse rather than guess. (Create a new migration instead of editing an applied one.)
  for (const migration of local) {
    const row = applied.get(migration.name);
    if (row && !scriptMatchesChecksum(migration.script, row.checksum)) {
      throw new Error(
        `Migration ${migration.name} was modified after it was applied to this database ` +
          `(checksum ${row.checksum} recorded, ${migration.checksum} on disk). Restore the file, or ` +
          "reset the development database.",
      );
    }
  }
  const localNames = new Set(local.map((migration) => migration.name));
  for (const name of applied.keys()) {
    if (!localNames.has(name)) log(`warning: ${name} is applied to the database but missing from the migrations folder`);
  }

  const result: ApplyMigrationsResult = { applied: [], alreadyApplied: [] };
  for (const migration of local) {
    if (applied.has(migration.name)) {
      result.alreadyApplied.push(migration.name);
      continue;
    }
    const started = performance.now();
    // One transaction per migration: the script and its bookkeeping row commit together, or not at
    // all. (Prisma keeps a failed row for `migrate resolve`; after a rollback there is nothing to
    // resolve, so we record nothing and the fixed migration can simply be run again.)
    await client.query("BEGIN");
    try {
      const id = randomUUID();
      await client.query(
        `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count)
         VALUES ($1, $2, $3, clock_timestamp(), 0)`,
        [id, migration.checksum, migration.name],
      );
      // No parameters, so node-postgres uses the simple protocol, which runs a multi-statement script.
      await client.query(migration.script);
      await client.query(
        "UPDATE _prisma_migrations SET finished_at = clock_timestamp(), applied_steps_count = 1 WHERE id = $1",
        [id],
      );
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK");
      throw new Error(`Migration ${migration.name} failed and was rolled back: ${describe(error)}`);
    }
    result.applied.push(migration.name);
    log(`applied ${migration.name} (${Math.round(performance.now() - started)} ms)`);
  }
  return result;
}

/** Reads `<dir>/<name>/migration.sql` for every folder, sorted as the Prisma CLI sorts them. */
async function readMigrations(migrationsDir: string): Promise<LocalMigration[]> {
  if (!existsSync(migrationsDir)) throw new Error(`No migrations folder at ${migrationsDir}`);

  // Prisma refuses to apply migrations written for another database; so do we.
  const lockfile = await readFile(path.join(migrationsDir, "migration_lock.toml"), "utf8").catch(() => undefined);
  const provider = lockfile?.match(/^\s*provider\s*=\s*"([^"]*)"/m)?.[1];
  if (provider !== undefined && provider !== "postgresql") {
    throw new Error(`${migrationsDir} holds migrations for ${provider}, not postgresql (migration_lock.toml)`);
  }

  const entries = await readdir(migrationsDir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort((a, b) => a.localeCompare(b));

  return Promise.all(
    names.map(async (name) => {
      const file = path.join(migrationsDir, name, "migration.sql");
      const script = await readFile(file, "utf8").catch(() => {
        throw new Error(`Migration folder ${name} has no readable migration.sql (${file})`);
      });
      return { name, script, checksum: computeChecksum(script) };
    }),
  );
}

/**
 * Prisma's checksum: sha256 of the script as read (UTF-8), as 64 lowercase hex digits. For a valid
 * UTF-8 file this is the sha256 of its bytes, i.e. what `sha256sum migration.sql` prints.
 */
export function computeChecksum(script: string): string {
  return createHash("sha256").update(script, "utf8").digest("hex");
}

/**
 * Prisma's comparison (schema engine, checksum.rs): a script still matches after git turned LF
 * into CRLF or back, and very old Prisma versions wrote hex digits without zero padding.
 */
export function scriptMatchesChecksum(script: string, checksum: string): boolean {
  const variants = [script, script.replaceAll("\r\n", "\n"), script.replaceAll("\n", "\r\n")];
  return variants.some((variant) => {
    const digest = createHash("sha256").update(variant, "utf8").digest();
    const rendered =
      checksum.length !== 0 && checksum.length !== 64
        ? Array.from(digest, (byte) => byte.toString(16)).join("")
        : digest.toString("hex");
    return rendered === checksum;
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
