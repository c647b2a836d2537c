// The webhook ingest's own connection pool, and a connection taken from it before a deadline.
//
// Why a pool of its own: a burst of deliveries (a replay of many, contract §5.7, is one) must wait
// for connections without taking them from the pages, and pages must not starve the ingest.
// Why not Prisma here: each delivery has its own deadline (contract §6: the service waits 10 s and
// never retries), so a request must be able to stop *waiting* for a connection at its deadline and
// be sure that nothing it asked for runs afterwards. Prisma's pool cannot abandon one waiter, and a
// query queued behind it would still run (and record the delivery) after the app answered 503.
// pg-pool can: the waiter gives up, and the connection, when it comes, goes back unused.
import "server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";
import { createPrismaClient, type Db } from "./client";
import { poolSize, POOLS, reportOpenConnections } from "./connection-budget";

/** No connection became free before the delivery's deadline: nothing was sent to the database. */
export class ConnectionDeadlineError extends Error {
  constructor(readonly waitedMs: number) {
    super(`no database connection within ${waitedMs} ms`);
    this.name = "ConnectionDeadlineError";
  }
}

function createPool(): pg.Pool {
  const config = env();
  const pool = new pg.Pool({
    connectionString: config.DATABASE_URL,
    max: poolSize("webhookIngest", config),
    application_name: PRODUCT.postgresApplicationName(POOLS.webhookIngest.purpose),
    // No pool-wide limit on the wait (pg-pool would apply one to every waiter alike): each
    // delivery brings its own deadline to withConnectionBefore().
    connectionTimeoutMillis: 0,
    // The ingest's statements take milliseconds. One that cannot finish (a lock held elsewhere, a
    // stalled server) is cancelled by PostgreSQL, which rolls it back: nothing half-recorded.
    statement_timeout: 2_000,
  });
  // An idle connection the server dropped must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  reportOpenConnections("webhookIngest", () => pool.totalCount);
  return pool;
}

// In development Next.js reloads modules; keep one pool across reloads.
const globalForPool = globalThis as unknown as { partnerAppIngestPool?: pg.Pool; partnerAppIngestDb?: Db };

export function ingestPool(): pg.Pool {
  globalForPool.partnerAppIngestPool ??= createPool();
  return globalForPool.partnerAppIngestPool;
}

/**
 * Prisma over the same pool, for the ingest's full transaction (lib/webhooks/receive.ts). Its wait
 * is bounded by the transaction's maxWait, which the caller sets to what is left of the delivery's
 * deadline: Prisma then stops waiting, and rolls back and returns a connection that comes later
 * without running the transaction's body.
 */
export function ingestDb(): Db {
  globalForPool.partnerAppIngestDb ??= createPrismaClient(new PrismaPg(ingestPool()));
  return globalForPool.partnerAppIngestDb;
}

/**
 * Runs `work` on a connection of the ingest pool, if one is free before `deadline` (epoch ms);
 * otherwise throws ConnectionDeadlineError having sent nothing. Waiters are served first come,
 * first served. Once `work` has started it is not abandoned: its statement either commits or is
 * rolled back, and the caller answers accordingly.
 */
export async function withConnectionBefore<T>(deadline: number, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const allowedMs = deadline - Date.now();
  if (allowedMs <= 0) throw new ConnectionDeadlineError(0);
  const pending = ingestPool().connect();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timed out">((resolve) => (timer = setTimeout(() => resolve("timed out"), allowedMs)));
  const first = await Promise.race([pending, timedOut]).finally(() => clearTimeout(timer));
  if (first === "timed out") {
    // Stop waiting, but let the connection, when it comes, go straight back to the pool unused.
    pending.then(
      (client) => client.release(),
      () => {},
    );
    throw new ConnectionDeadlineError(allowedMs);
  }
  try {
    const result = await work(first);
    first.release();
    return result;
  } catch (error) {
    // A database error (a SQLSTATE) leaves the connection usable; anything else may not.
    first.release(error instanceof pg.DatabaseError ? undefined : error instanceof Error ? error : true);
    throw error;
  }
}
