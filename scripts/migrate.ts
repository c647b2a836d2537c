// npm run db:migrate: applies pending migrations in prisma/migrations to DATABASE_URL, then creates
// or migrates the job engine's schema (pg-boss) and its queues.
//
// It uses lib/db/migrate.ts rather than `prisma migrate deploy` (see the comment there for why);
// both keep the same _prisma_migrations table, so either can be used on a machine with Prisma's engine.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PRODUCT } from "../lib/config/product";
import { applyMigrations } from "../lib/db/migrate";
import { migrateJobSchema } from "../lib/jobs/schema";

// In the migrate image this file is bundled into migrate.mjs with prisma/migrations beside it
// (scripts/assemble-jobs.mjs); run from the repository, lib/db/migrate.ts finds the repository's own.
const besideThisFile = fileURLToPath(new URL("./prisma/migrations/", import.meta.url));
const migrationsDir = existsSync(besideThisFile) ? besideThisFile : undefined;

const connectionString = process.env.DATABASE_URL;
if (!connectionString) {
  console.error(
    "db:migrate: DATABASE_URL is not set. Point it at your database, e.g.\n" +
      `  DATABASE_URL=postgresql://user:password@localhost:5432/${PRODUCT.databaseName} npm run db:migrate\n` +
      "(`npm run dev` starts a local database and migrates it for you.)",
  );
  process.exit(1);
}

try {
  const started = performance.now();
  const { applied, alreadyApplied } = await applyMigrations({
    connectionString,
    migrationsDir,
    log: (line) => console.log(`db:migrate: ${line}`),
  });
  const took = Math.round(performance.now() - started);
  if (applied.length === 0) {
    console.log(`db:migrate: the database is up to date (${alreadyApplied.length} migration(s) already applied).`);
  } else {
    console.log(
      `db:migrate: applied ${applied.length} migration(s) in ${took} ms: ${applied.join(", ")}` +
        (alreadyApplied.length > 0 ? ` (${alreadyApplied.length} were already applied)` : ""),
    );
  }
  // The job engine's schema (pg-boss), its queues and schedules: lib/jobs/schema.ts explains why here.
  const jobs = await migrateJobSchema(connectionString, (line) => console.log(`db:migrate: ${line}`));
  console.log(`db:migrate: job engine ready (${jobs.queues.length} queues; schedules ${jobs.schedules.join(", ")}).`);
} catch (error) {
  console.error(`db:migrate: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
