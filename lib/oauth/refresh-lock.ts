// The install's refresh lock (rule 1 in refresh.ts): one refresh per install across processes and
// instances, and a bound on how many refreshes of different installs run at once in this process.
//
// A refresh spends most of its time waiting on the identity provider (up to HTTP_TIMEOUT_MS). Its
// lock must last that long, but it must not hold one of the Prisma pool's connections meanwhile:
// the requests that need no refresh share that pool, and a storm of refreshes (many installs whose
// tokens expire together) would queue every page behind it. So the lock is a session-level
// PostgreSQL advisory lock on a connection of its own:
//
//  - one connection holds the locks of every refresh under way in this process (a session may hold
//    any number of advisory locks), so a storm of refreshes costs one connection, not one each;
//  - only when another process holds the install's lock does a refresh wait for it, blocked in
//    `pg_advisory_lock` on a connection opened for that wait (PostgreSQL queues the waiters and
//    wakes one when the holder lets go), which then holds the lock until the refresh ends;
//  - crash-safe: if the process dies, its connections close and PostgreSQL releases their locks.
//    The refresh marker (rule 2) still protects a token whose outcome the dead process never learned;
//  - REFRESH_CONCURRENCY is the number of refreshes that talk to the identity provider at once in
//    this process, however many installs are due: a slot is taken before the lock, in arrival order;
//  - the key is the one earlier releases used (`hashtext('refresh:<id>')`), and session and
//    transaction advisory locks on one key exclude each other, so instances of an earlier release and
//    this one never refresh the same install at once during a rolling deploy.
//
// A session-level lock needs a real session: with PgBouncer in front, use session pooling for the
// app (transaction pooling would hand the lock's session to someone else between statements).
import "server-only";
import pg from "pg";
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { recordRefreshLockWait } from "@/lib/telemetry";

/**
 * How long a refresh may wait for a free slot, and then again for the install's lock (another
 * instance refreshing the same install), before the caller is told to try again later.
 */
export const LOCK_WAIT_MS = 20_000;
/** The shared lock connection is closed after this long with no lock held: it exists only while refreshes run. */
const IDLE_CLOSE_MS = 10_000;

export class RefreshLockTimeoutError extends Error {
  constructor(what: "slot" | "lock") {
    super(what === "slot" ? "no refresh slot became free in time" : "another process held the install's refresh lock too long");
    this.name = "RefreshLockTimeoutError";
  }
}

// ----- the slots: at most REFRESH_CONCURRENCY refreshes at once in this process -----

/**
 * A counting semaphore whose waiters are served in arrival order and give up at a deadline. Written
 * here because it is a dozen lines; the libraries that queue (p-limit, async-sema) take no deadline.
 */
class Slots {
  private inUse = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(private readonly limit: () => number) {}

  async take(deadline: number): Promise<() => void> {
    if (this.inUse < this.limit() && this.waiting.length === 0) {
      this.inUse += 1;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(new RefreshLockTimeoutError("slot"));
      }, Math.max(0, deadline - Date.now()));
      this.waiting.push(waiter);
    });
    // The slot was handed over by a release (inUse already counts it).
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return; // a double release would raise the limit
      released = true;
      const next = this.waiting.shift();
      if (next) next.grant();
      else this.inUse -= 1;
    };
  }
}

// ----- the shared lock connection -----

type LockSession = { client: pg.Client; alive: boolean; held: number; idleTimer?: NodeJS.Timeout };

/** The shared session's statements (try-lock, unlock) answer at once; one that does not means a stalled connection. */
const SHARED_QUERY_TIMEOUT_MS = 5_000;

function connectionConfig(lockTimeoutMs: number, queryTimeoutMs?: number): pg.ClientConfig {
  return {
    connectionString: env().DATABASE_URL,
    // Waiting for a lock is bounded by PostgreSQL's lock_timeout, which applies to advisory locks.
    options: `-c lock_timeout=${Math.max(1, Math.round(lockTimeoutMs))}`,
    application_name: PRODUCT.postgresApplicationName("refresh lock"),
    connectionTimeoutMillis: LOCK_WAIT_MS,
    ...(queryTimeoutMs ? { query_timeout: queryTimeoutMs } : {}),
  };
}

/** Gives up a shared session that failed a statement: closing it releases its locks; the next caller opens another. */
function abandon(session: LockSession, error: unknown): void {
  if (!session.alive) return;
  session.alive = false;
  logger.warn({ err: error, locksHeld: session.held }, "the refresh lock connection failed a statement; closing it (its locks are released with it)");
  void session.client.end().catch(() => undefined);
}

// In development Next.js reloads modules; keep one set of locks across reloads (as lib/db/client.ts does).
const globalForLocks = globalThis as unknown as {
  partnerAppRefreshLocks?: { slots: Slots; session?: Promise<LockSession>; heldHere: Map<string, Promise<void>> };
};

function state() {
  globalForLocks.partnerAppRefreshLocks ??= { slots: new Slots(() => env().REFRESH_CONCURRENCY), heldHere: new Map() };
  return globalForLocks.partnerAppRefreshLocks;
}

/** The shared session, connected on first use and again after it failed or was closed while idle. */
async function sharedSession(): Promise<LockSession> {
  const locks = state();
  // Callers that arrive while it connects share the one connection being opened.
  const current = locks.session;
  if (current) {
    const session = await current.catch(() => undefined);
    if (session?.alive) return session;
    if (locks.session !== current) return sharedSession(); // someone already opened a new one
  }
  const opening = (async () => {
    const client = new pg.Client(connectionConfig(LOCK_WAIT_MS, SHARED_QUERY_TIMEOUT_MS));
    const session: LockSession = { client, alive: true, held: 0 };
    // A connection can fail at any time (the database restarts, a network cut): pg emits 'error',
    // which must be listened to. Every lock it held ended with it; the markers still protect.
    const lost = (error?: Error) => {
      if (!session.alive) return;
      session.alive = false;
      if (session.held > 0) logger.warn({ err: error, locksHeld: session.held }, "the refresh lock connection failed; its locks were released with it");
    };
    client.on("error", lost);
    client.on("end", () => lost());
    await client.connect();
    return session;
  })();
  locks.session = opening;
  try {
    return await opening;
  } catch (error) {
    if (locks.session === opening) locks.session = undefined;
    throw error;
  }
}

function closeWhenIdle(session: LockSession): void {
  clearTimeout(session.idleTimer);
  if (session.held > 0 || !session.alive) return;
  session.idleTimer = setTimeout(() => {
    if (session.held > 0 || !session.alive) return;
    session.alive = false;
    void session.client.end().catch(() => undefined);
  }, IDLE_CLOSE_MS);
  // An idle lock connection must not keep a process (a job runner, a test) from exiting.
  session.idleTimer.unref();
}

/** A held lock: `release` never throws (a failed unlock closes the connection, which releases it). */
type HeldLock = { release: () => Promise<void> };

async function lockOnSharedSession(key: string): Promise<HeldLock | null> {
  const session = await sharedSession();
  clearTimeout(session.idleTimer);
  session.held += 1;
  let taken = false;
  try {
    const { rows } = await session.client.query<{ taken: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS taken", [key]);
    taken = rows[0]?.taken === true;
  } catch (error) {
    abandon(session, error);
    throw error;
  } finally {
    if (!taken) {
      session.held -= 1;
      closeWhenIdle(session);
    }
  }
  if (!taken) return null;
  return {
    release: async () => {
      try {
        // Only on the connection that took it: a new connection never held it.
        if (session.alive) await session.client.query("SELECT pg_advisory_unlock(hashtext($1))", [key]);
      } catch (error) {
        // Closing the connection releases the lock (and the others it holds; their refreshes'
        // markers protect them). The refresh's outcome stands.
        abandon(session, error);
      } finally {
        session.held -= 1;
        closeWhenIdle(session);
      }
    },
  };
}

/** Waits, blocked in PostgreSQL, for a lock another process holds; holds it on that connection. */
async function lockOnOwnConnection(key: string, deadline: number): Promise<HeldLock> {
  const client = new pg.Client(connectionConfig(deadline - Date.now()));
  let failed: unknown;
  client.on("error", (error) => (failed = error));
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext($1))", [key]);
  } catch (error) {
    await client.end().catch(() => undefined);
    // 55P03 lock_not_available: lock_timeout passed while the other process held it.
    if ((error as { code?: string }).code === "55P03") throw new RefreshLockTimeoutError("lock");
    throw error;
  }
  return {
    // Closing the connection releases the lock whatever state it is in.
    release: async () => {
      if (!failed) await client.query("SELECT pg_advisory_unlock(hashtext($1))", [key]).catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

/**
 * Runs `work` holding the install's refresh lock, after taking one of this process's refresh slots.
 * Rejects before `work` starts when no slot or no lock could be had in time, or the database is
 * unreachable; then nothing was sent. Releasing never throws, and `work`'s result stands.
 */
export async function withRefreshLock<T>(installRowId: string, work: () => Promise<T>): Promise<T> {
  const key = `refresh:${installRowId}`;
  const locks = state();
  const waitStartedAt = performance.now();
  const deadline = Date.now() + LOCK_WAIT_MS;
  const releaseSlot = await locks.slots.take(deadline);
  try {
    // A session's advisory locks are re-entrant: two callers in this process must not both "take"
    // the install's lock on the shared session. refresh.ts shares one refresh per install already;
    // this keeps the lock correct for any other caller too.
    for (let mine = locks.heldHere.get(key); mine; mine = locks.heldHere.get(key)) await mine;
    let markReleased!: () => void;
    locks.heldHere.set(key, new Promise<void>((resolve) => (markReleased = resolve)));
    try {
      const held = (await lockOnSharedSession(key)) ?? (await lockOnOwnConnection(key, deadline));
      recordRefreshLockWait(performance.now() - waitStartedAt); // the slot and the lock, together
      try {
        return await work();
      } finally {
        await held.release();
      }
    } finally {
      locks.heldHere.delete(key);
      markReleased();
    }
  } finally {
    releaseSlot();
  }
}
