// Scratch databases for integration tests: each test file gets its own empty database on the server
// that DATABASE_URL names, so files can run in parallel and never see each other's rows.
//
// scripts/test.ts starts an embedded server and sets DATABASE_URL; any other PostgreSQL works too,
// as long as the user may CREATE DATABASE.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { applyMigrations } from "../../lib/db/migrate";

export interface ScratchDatabase {
  /** Connection URL of the new database. */
  url: string;
  /** Closes every connection to it and drops it. */
  drop: () => Promise<void>;
}

function serverUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      "DATABASE_URL is not set: integration tests need a PostgreSQL server to create scratch databases on. " +
        "Run them through `npm test`, which starts one, or set DATABASE_URL to a server where this user may CREATE DATABASE.",
    );
  }
  return url;
}

async function withServer<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const name = `scratch_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await withServer((client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`));

  const url = new URL(serverUrl());
  url.pathname = `/${name}`;

  const drop = () =>
    withServer(async (client) => {
      // A pool left open by a failed test must not keep the database alive.
      await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]);
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)}`);
    });

  return { url: url.toString(), drop };
}

/** A scratch database with every migration in prisma/migrations applied. */
export async function migratedScratchDatabase(): Promise<ScratchDatabase> {
  const database = await createScratchDatabase();
  try {
    await applyMigrations({ connectionString: database.url });
  } catch (error) {
    await database.drop();
    throw error;
  }
  return database;
}
