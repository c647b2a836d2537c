// The install's refresh lock (rule 1 in refresh.ts): one refresh per install across processes and
// instances, and a bound on how many refreshes of different installs run at once in this process.
//
// A refresh spends most of its time waiting on the identity provider (up to HTTP_TIMEOUT_MS). Its
// lock must last that long, but it must not hold one of the Prisma pool's connections meanwhile:
// the requests that need no refresh share that pool, and a storm of refreshes (many installs whose
// tokens expire together) would queue every page behind it. So the lock is a session-level
// `pg_advisory_lock` held on a connection of a small pool of its own, sized REFRESH_CONCURRENCY:
//
//  - crash-safe: if the process dies, its connection closes and PostgreSQL releases the lock. The
//    refresh marker (rule 2) still protects a token whose outcome the dead process never learned;
//  - the pool is the concurrency limit: a refresh waits in its queue for a connection, so at most
//    REFRESH_CONCURRENCY refreshes talk to the identity provider at once, however many installs are
//    due, and none of them takes a connection from the pages;
//  - the key is the one the earlier transaction-level lock used (`hashtext('refresh:<id>')`), and
//    session and transaction advisory locks on one key exclude each other, so instances of the
//    previous release and this one never refresh the same install at once during a rolling deploy.
//
// A session-level lock needs a real session: with PgBouncer in front, use session pooling for the
// app (transaction pooling would hand the lock's session to someone else between statements).
import "server-only";
import pg from "pg";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { recordRefreshLockWait } from "@/lib/telemetry";

/**
 * How long a refresh may wait for a free slot, and then again for the install's lock (another
 * instance refreshing the same install), before the caller is told to try again later.
 */
export const LOCK_WAIT_MS = 20_000;
/** Lock connections left idle this long are closed: they exist only while refreshes run. */
const IDLE_CLOSE_MS = 10_000;

function createLockPool(): pg.Pool {
  const pool = new pg.Pool({
    connectionString: env().DATABASE_URL,
    max: env().REFRESH_CONCURRENCY,
    // Covers the wait in the pool's queue (for a refresh slot) as well as connecting.
    connectionTimeoutMillis: LOCK_WAIT_MS,
    idleTimeoutMillis: IDLE_CLOSE_MS,
    // An idle lock connection must not keep a process (a job runner, a test) from exiting.
    allowExitOnIdle: true,
    // Waiting for the install's lock is bounded the same way (PostgreSQL's lock_timeout applies to
    // advisory locks); set per session, since every statement on these connections is a lock.
    options: `-c lock_timeout=${LOCK_WAIT_MS}`,
    application_name: "partner-app refresh lock",
  });
  // A connection that fails while idle is dropped by the pool; without this listener the pool's
  // 'error' event would end the process. Its locks, if any, ended with it.
  pool.on("error", (error) => logger.warn({ err: error }, "a refresh-lock connection failed and was dropped"));
  return pool;
}

// In development Next.js reloads modules; keep one pool across reloads (as lib/db/client.ts does).
const globalForLocks = globalThis as unknown as { partnerAppRefreshLocks?: pg.Pool };

function lockPool(): pg.Pool {
  globalForLocks.partnerAppRefreshLocks ??= createLockPool();
  return globalForLocks.partnerAppRefreshLocks;
}

/**
 * Runs `work` holding the install's refresh lock, on a connection of the lock pool (waiting for a
 * free one first). Rejects before `work` starts when no slot or no lock could be had in time, or the
 * database is unreachable; then nothing was sent. Releasing never throws: if the unlock fails (the
 * database went away after the work committed), the connection is closed instead, which releases
 * the lock, and `work`'s result stands.
 */
export async function withRefreshLock<T>(installRowId: string, work: () => Promise<T>): Promise<T> {
  const key = `refresh:${installRowId}`;
  const waitStartedAt = performance.now();
  const client = await lockPool().connect();
  // A checked-out client's connection can fail at any time (the database restarts, a network cut):
  // pg emits 'error' on it, which must be listened to. The lock ended with that connection.
  let broken: unknown;
  const onError = (error: Error) => {
    broken = error;
    logger.warn({ installRowId, err: error }, "the refresh lock's connection failed; the lock was released with it");
  };
  client.on("error", onError);
  let locked = false;
  try {
    await client.query("SELECT pg_advisory_lock(hashtext($1))", [key]);
    locked = true;
    recordRefreshLockWait(performance.now() - waitStartedAt); // the slot and the lock, together
    return await work();
  } finally {
    if (locked && !broken) {
      try {
        await client.query("SELECT pg_advisory_unlock(hashtext($1))", [key]);
      } catch (error) {
        broken = error;
      }
    }
    client.removeListener("error", onError);
    // A connection that failed, or whose unlock did, is closed rather than reused: closing it is
    // what releases a lock it may still hold.
    client.release(broken ? (broken instanceof Error ? broken : new Error(String(broken))) : undefined);
  }
}
