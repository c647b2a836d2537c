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
//
// Its details say how many connections this instance may open against what the server allows
// (lib/db/connection-budget.ts) and warn, never fail, when the two do not fit: an instance that
// cannot open its last connections still serves, only slower or with errors under load.
//
// They also say how far this process's clock is from the service's (lib/partner-api/service-clock.ts),
// with a warning when it nears the webhook window: also a warning only, since the instance still
// serves everything but webhooks, and only a fixed clock helps.
import "server-only";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { db } from "@/lib/db/client";
import { openConnections, processBudget } from "@/lib/db/connection-budget";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { jobSchemaIsReady } from "@/lib/jobs/schema";
import { readTokenCircuit } from "@/lib/oauth/circuit";
import { readServiceClock, type ServiceClockReading } from "@/lib/partner-api/service-clock";
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

/**
 * This instance's connections against the server's (docs/operations.md "Database"). The app cannot
 * know how many replicas and workers a deployment runs (no setting says it), so it reports what it
 * can see: what this instance may open, what the server allows an ordinary role
 * (max_connections - superuser_reserved_connections - reserved_connections), and the client sessions
 * other than this instance's open now (other replicas, workers, anyone else).
 */
export type ConnectionBudgetReport = {
  /** The most connections this app process opens (lib/db/connection-budget.ts). */
  thisInstance: number;
  /** Of which open now. */
  openHere: number;
  serverAllows: number;
  otherSessions: number;
  /** Set when this instance's full budget and the other sessions open now exceed what the server allows. */
  warning?: string;
};

export type Readiness =
  | {
      ready: boolean;
      status: "ready" | "unready";
      checks: ReadinessChecks;
      /** `connections` when the database answered; `clock` always (nulls until this process has heard from the service). */
      details: { connections?: ConnectionBudgetReport; clock: ServiceClockReading };
    }
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

async function connectionBudget(): Promise<ConnectionBudgetReport> {
  const [server] = await db().$queryRaw<{ allows: number; open: number }[]>`
    SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
             - coalesce(current_setting('reserved_connections', true)::int, 0) AS allows, -- PostgreSQL 16 and later
           (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS open`;
  const thisInstance = processBudget("app", env()).total;
  const openHere = openConnections();
  const report: ConnectionBudgetReport = {
    thisInstance,
    openHere,
    serverAllows: server!.allows,
    // This statement's own connection is among both counts.
    otherSessions: Math.max(0, server!.open - openHere),
  };
  if (thisInstance + report.otherSessions > report.serverAllows) {
    report.warning =
      thisInstance > report.serverAllows
        ? `this instance may open ${thisInstance} connections, more than the ${report.serverAllows} the server allows: lower DATABASE_POOL_SIZE or WEBHOOK_DATABASE_POOL_SIZE, or raise max_connections`
        : `this instance may open ${thisInstance} connections and ${report.otherSessions} other sessions are open now, more than the ${report.serverAllows} the server allows: fewer replicas or workers, smaller pools, or a larger max_connections (docs/operations.md "Database")`;
  }
  noteWarning(report.warning);
  return report;
}

/** Logs a budget warning when it appears or changes, not on every probe. */
let lastWarning: string | undefined;
function noteWarning(warning: string | undefined): void {
  if (warning && warning !== lastWarning) logger.warn({ warning }, "the database's connections may run out");
  lastWarning = warning;
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
  // Reported only (see the top of this file): a failure here leaves the details out, not the instance.
  const connections = checks.database === "ok" ? await withDeadline(connectionBudget()).catch(() => undefined) : undefined;
  // Only a state known to be good is ready: "unknown" (a check that failed or did not answer in
  // time) is not, because a load balancer that trusts this answer must never route to an app whose
  // tables may not be there. The circuit is reported only (see the top of this file).
  const ready = checks.database === "ok" && checks.migrations === "ok";
  return { ready, status: ready ? "ready" : "unready", checks, details: { ...(connections ? { connections } : {}), clock: readServiceClock() } };
}
