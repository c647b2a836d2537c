// The webhook ingest's own connection pool, and a connection taken from it before a deadline.
//
// Why a pool of its own: a burst of deliveries (a replay of many, contract §5.7, is one) must wait
// for connections without taking them from the pages, and pages must not starve the ingest.
// Why not Prisma here: each delivery has its own deadline (contract §6: the service waits 10 s and
// never retries), so a request must be able to stop *waiting* for a connection at its deadline and
// be sure that nothing it asked for runs afterwards. Prisma's pool cannot abandon one waiter, and a
// query queued behind it would still run (and record the delivery) after the app answered 503.
// pg-pool can: the waiter gives up, and the connection, when it comes, goes back unused.
//
// Admission (issue 34, docs/spec-gaps.md A201): no delivery is started so late that its recording
// would end after its deadline and its 200 come after the service stopped waiting (contract §6: 10 s,
// a late answer is a failure never retried). A delivery waits for a connection only until its
// deadline less the recent time a delivery holds one (a moving average over every checkout, both
// paths), and one that comes later than that goes back unused: refused then, with nothing recorded,
// rather than at the deadline or after it. Why not also refuse on arrival from an estimate of the
// queue (its depth times that pace): tried, it refused deliveries the pool then recorded in time,
// since the pace measured in a burst's first moments is inflated by the event loop's lag, and a
// delivery refused is lost until someone asks for a replay. A cut at the deadline never refuses one
// that could still have been recorded in time at the recent pace, and needs no setting.
import "server-only";
import { performance } from "node:perf_hooks";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";
import { createPrismaClient, type Db } from "./client";
import { poolSize, POOLS, reportOpenConnections } from "./connection-budget";

/** No connection became free before the delivery's deadline: nothing was sent to the database. */
export class ConnectionDeadlineError extends Error {
  constructor(
    readonly waitedMs: number,
    /** When the pool expects to have worked through its queue at the recent pace (the 503's Retry-After). */
    readonly retryAfterSeconds = 1,
  ) {
    super(`no database connection within ${waitedMs} ms`);
    this.name = "ConnectionDeadlineError";
  }
}

/** How much each new checkout moves the recent hold time: about the last ten count. */
const HOLD_WEIGHT = 0.2;
type Pace = { holdMs: number | undefined; acquiredAt: WeakMap<pg.PoolClient, number> };

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
  // The recent hold time, from every checkout (Prisma's transactions included); a connection handed
  // back unused (below) is forgotten first, so it does not count.
  pool.on("acquire", (client) => pace.acquiredAt.set(client, performance.now()));
  pool.on("release", (_error, client) => {
    const acquired = pace.acquiredAt.get(client);
    if (acquired === undefined) return;
    pace.acquiredAt.delete(client);
    const held = performance.now() - acquired;
    pace.holdMs = pace.holdMs === undefined ? held : pace.holdMs + HOLD_WEIGHT * (held - pace.holdMs);
  });
  reportOpenConnections("webhookIngest", () => pool.totalCount);
  return pool;
}

// In development Next.js reloads modules; keep one pool across reloads.
const globalForPool = globalThis as unknown as { partnerAppIngestPool?: pg.Pool; partnerAppIngestDb?: Db; partnerAppIngestPace?: Pace };
const pace: Pace = (globalForPool.partnerAppIngestPace ??= { holdMs: undefined, acquiredAt: new WeakMap() });

export function ingestPool(): pg.Pool {
  globalForPool.partnerAppIngestPool ??= createPool();
  return globalForPool.partnerAppIngestPool;
}

/**
 * How long a delivery asking now may wait for a connection so that its own recording, at the recent
 * pace, still ends by `deadline` (epoch ms). Throws ConnectionDeadlineError, nothing sent, when that
 * moment has passed. Before any checkout has been measured the pace counts as nothing.
 */
export function admitBefore(deadline: number, now = Date.now()): number {
  const maxWaitMs = deadline - now - recentHoldMs();
  if (maxWaitMs <= 0) throw new ConnectionDeadlineError(0, retryAfterSeconds());
  return maxWaitMs;
}

/** When the pool should have worked through its queue at the recent pace: a 503's Retry-After. */
function retryAfterSeconds(): number {
  const pool = ingestPool();
  const ahead = pool.totalCount - pool.idleCount + pool.waitingCount;
  return Math.max(1, Math.ceil(((ahead / Math.max(1, pool.options.max ?? 1)) * recentHoldMs()) / 1000));
}

/** The recent hold time; nothing before a first checkout. */
const recentHoldMs = () => pace.holdMs ?? 0;

/**
 * Prisma over the same pool, for the ingest's full transaction (lib/webhooks/receive.ts). Its wait
 * is bounded by the transaction's maxWait, which the caller sets with admitBefore: Prisma then stops waiting, and rolls back and returns a connection that comes later
 * without running the transaction's body.
 */
export function ingestDb(): Db {
  globalForPool.partnerAppIngestDb ??= createPrismaClient(new PrismaPg(ingestPool()));
  return globalForPool.partnerAppIngestDb;
}

/**
 * Runs `work` on a connection of the ingest pool, if one comes early enough for `work` to end by
 * `deadline` (epoch ms) at the recent pace (admitBefore); otherwise throws ConnectionDeadlineError
 * having sent nothing. Waiters are served first come,
 * first served. Once `work` has started it is not abandoned: its statement either commits or is
 * rolled back, and the caller answers accordingly.
 */
export async function withConnectionBefore<T>(deadline: number, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const startedAt = Date.now();
  const maxWaitMs = admitBefore(deadline, startedAt);
  const pending = ingestPool().connect();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timed out">((resolve) => (timer = setTimeout(() => resolve("timed out"), maxWaitMs)));
  const first = await Promise.race([pending, timedOut]).finally(() => clearTimeout(timer));
  if (first === "timed out") {
    // Stop waiting, but let the connection, when it comes, go straight back to the pool unused.
    pending.then(giveBackUnused, () => {});
    throw new ConnectionDeadlineError(Date.now() - startedAt, retryAfterSeconds());
  }
  // The connection came, but too late for this delivery's recording to end by its deadline.
  if (Date.now() + recentHoldMs() > deadline) {
    giveBackUnused(first);
    throw new ConnectionDeadlineError(Date.now() - startedAt, retryAfterSeconds());
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

/** A connection returned without having been used: not a measure of the pace. */
function giveBackUnused(client: pg.PoolClient): void {
  pace.acquiredAt.delete(client);
  client.release();
}
