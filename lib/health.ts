// Health and readiness, for load balancers and orchestrators (docs/operations.md):
//
//   GET /api/health  the process is up and serving: no dependency is asked (a liveness probe);
//   GET /api/ready   this instance can do useful work: the database answers within a deadline and
//                    has every migration this code expects (a readiness probe). While the process
//                    is stopping (SIGTERM, lib/shutdown.ts) it says "stopping" without asking
//                    anything, so a load balancer that still routes to it takes it out.
//
// Readiness also reports the token-endpoint circuit (lib/oauth/circuit.ts), but an open circuit
// does not make the instance unready: it concerns the app's credentials at the identity provider,
// which every instance shares, so taking instances out of the load balancer would not help; the
// staff console says what to do. Nothing here carries a secret: names of checks and their states.
import "server-only";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { db } from "@/lib/db/client";
import { jobSchemaIsReady } from "@/lib/jobs/schema";
import { readTokenCircuit } from "@/lib/oauth/circuit";
import { isStopping } from "@/lib/shutdown";

/** A readiness answer must come quickly: a probe that hangs is worse than one that says no. */
const CHECK_DEADLINE_MS = 2_000;

export type ReadinessChecks = {
  database: "ok" | "unavailable";
  /**
   * "pending": the database lacks migrations this code needs (or was never migrated), or the job
   * engine's schema (run `npm run db:migrate`). "unknown": it could not be told (the check failed or
   * timed out, or prisma/migrations is not deployed beside the app). Only "ok" is ready.
   */
  migrations: "ok" | "pending" | "unknown";
  tokenCircuit: "closed" | "open" | "unknown";
};

export type Readiness =
  | { ready: boolean; status: "ready" | "unready"; checks: ReadinessChecks }
  /** The process got SIGTERM and is finishing its in-flight work: route nothing new here. */
  | { ready: false; status: "stopping" };

class DeadlineError extends Error {}

function withDeadline<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError("readiness check timed out")), CHECK_DEADLINE_MS);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

// The migrations this build ships with. Resolved from the working directory rather than this
// module's URL, which points into the bundle once Next.js has built the app.
let expectedMigrations: Promise<string[]> | undefined;
function migrationsThisCodeExpects(): Promise<string[]> {
  expectedMigrations ??= readdir(path.join(process.cwd(), "prisma", "migrations"), { withFileTypes: true }).then((entries) =>
    entries.filter((e) => e.isDirectory()).map((e) => e.name),
  );
  return expectedMigrations;
}

async function migrationState(): Promise<ReadinessChecks["migrations"]> {
  let expected: string[];
  try {
    expected = await migrationsThisCodeExpects();
  } catch {
    expectedMigrations = undefined;
    // The folder is not deployed beside the app (the runtime image always has it:
    // scripts/assemble-runtime.sh), so nothing says which migrations this code needs. "unknown",
    // and unready: a packaging mistake shows at the first deploy, instead of hiding a pending one.
    return "unknown";
  }
  // Prisma's own bookkeeping (lib/db/migrate.ts keeps it exactly as `prisma migrate deploy` does).
  // A database never migrated has no such table: that is a migration pending, not an unknown state,
  // so it is asked for before the query that would fail on it.
  const [table] = await db().$queryRaw<{ present: boolean }[]>`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`;
  if (!table?.present) return "pending";
  const applied = await db().$queryRaw<{ migration_name: string }[]>`
    SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
  const done = new Set(applied.map((row) => row.migration_name));
  if (!expected.every((name) => done.has(name))) return "pending";
  // The job engine's schema and queues, which `npm run db:migrate` creates beside them (lib/jobs/schema.ts):
  // missing, the worker cannot start and nothing the app enqueues would run.
  const jobsReady = await jobSchemaIsReady((text, values) => db().$queryRawUnsafe(text, ...values));
  return jobsReady ? "ok" : "pending";
}

export async function checkReadiness(): Promise<Readiness> {
  // No check runs while stopping: the answer cannot change, and the database is for in-flight work now.
  if (isStopping()) return { ready: false, status: "stopping" };
  const checks: ReadinessChecks = { database: "unavailable", migrations: "unknown", tokenCircuit: "unknown" };
  try {
    await withDeadline(db().$queryRaw`SELECT 1`);
    checks.database = "ok";
    checks.migrations = await withDeadline(migrationState());
    checks.tokenCircuit = (await withDeadline(readTokenCircuit())).open ? "open" : "closed";
  } catch {
    // Whatever did not answer in time stays "unavailable" / "unknown".
  }
  // Only a state known to be good is ready: "unknown" (a check that failed or did not answer in
  // time) is not, because a load balancer that trusts this answer must never route to an app whose
  // tables may not be there. The circuit is reported only (see the top of this file).
  const ready = checks.database === "ok" && checks.migrations === "ok";
  return { ready, status: ready ? "ready" : "unready", checks };
}
