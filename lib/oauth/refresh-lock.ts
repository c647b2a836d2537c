// The install's refresh lock (rule 1 in refresh.ts): one refresh per install across processes and
// instances, and a bound on how many refreshes of different installs run at once in this process.
//
// A refresh spends most of its time waiting on the identity provider (up to HTTP_TIMEOUT_MS). Its
// lock must last that long, but it must not hold one of the Prisma pool's connections meanwhile:
// the requests that need no refresh share that pool, and a storm of refreshes (many installs whose
// tokens expire together) would queue every page behind it. So the lock is a session-level
// PostgreSQL advisory lock on one connection of this process's own, whatever happens:
//
//  - that connection holds the locks of every refresh under way in this process (a session may hold
//    any number of advisory locks), so a storm of refreshes costs one connection, not one each;
//  - when another process holds the install's lock, the refresh waits without a connection: every
//    POLL_MS (jittered, so that processes do not ask in step) one statement on that same connection
//    tries again the locks of all this process's waiters (`pg_try_advisory_lock`, which never
//    blocks), until each is taken or its deadline (LOCK_WAIT_MS) passes. Not a connection blocked in
//    `pg_advisory_lock`: a session that waits there can run nothing else, so it waits for one install
//    at a time and every other waiter queues behind it; waiting for N installs at once would need N
//    connections, which is what exhausted max_connections when three replicas shared a storm
//    (issue 34). The price is that a waiter learns of a release up to one poll later, against a
//    refresh that waits on the identity provider anyway. So a process holds at most one connection
//    for refresh locks (lib/db/connection-budget.ts counts it);
//  - crash-safe: if the process dies, its connection closes and PostgreSQL releases its locks.
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
import { POOLS, reportOpenConnections } from "@/lib/db/connection-budget";
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
/** How often the locks that other processes hold are tried again; each wait is drawn from half to one and a half of it. */
const POLL_MS = 50;

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

/** The session's statements (try-lock, unlock) never wait for a lock and answer at once; one that does not means a stalled connection. */
const SHARED_QUERY_TIMEOUT_MS = 5_000;

function connectionConfig(): pg.ClientConfig {
  return {
    connectionString: env().DATABASE_URL,
    // pg_stat_activity names it; tests count it by this name.
    application_name: PRODUCT.postgresApplicationName(POOLS.refreshLock.purpose),
    connectionTimeoutMillis: LOCK_WAIT_MS,
    query_timeout: SHARED_QUERY_TIMEOUT_MS,
  };
}

/** Gives up a shared session that failed a statement: closing it releases its locks; the next caller opens another. */
function abandon(session: LockSession, error: unknown): void {
  if (!session.alive) return;
  session.alive = false;
  logger.warn({ err: error, locksHeld: session.held }, "the refresh lock connection failed a statement; closing it (its locks are released with it)");
  void session.client.end().catch(() => undefined);
}

/** A refresh waiting for a lock another process holds; at most one per key (heldHere). */
type Waiter = { deadline: number; taken: (lock: HeldLock) => void; failed: (error: unknown) => void };

type LockState = {
  slots: Slots;
  session?: Promise<LockSession>;
  heldHere: Map<string, Promise<void>>;
  waiting: Map<string, Waiter>;
  polling: boolean;
};

// In development Next.js reloads modules; keep one set of locks across reloads (as lib/db/client.ts does).
const globalForLocks = globalThis as unknown as { partnerAppRefreshLocks?: LockState };

function state(): LockState {
  globalForLocks.partnerAppRefreshLocks ??= {
    slots: new Slots(() => env().REFRESH_CONCURRENCY),
    heldHere: new Map(),
    waiting: new Map(),
    polling: false,
  };
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
    const client = new pg.Client(connectionConfig());
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
    reportOpenConnections("refreshLock", () => (session.alive ? 1 : 0));
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
  const busy = () => session.held > 0 || state().waiting.size > 0 || !session.alive;
  if (busy()) return;
  session.idleTimer = setTimeout(() => {
    if (busy()) return;
    session.alive = false;
    void session.client.end().catch(() => undefined);
  }, IDLE_CLOSE_MS);
  // An idle lock connection must not keep a process (a job runner, a test) from exiting.
  session.idleTimer.unref();
}

/** A held lock: `release` never throws (a failed unlock closes the connection, which releases it). */
type HeldLock = { release: () => Promise<void> };

/** The lock `key` just taken on `session`, and the way to let it go. */
function heldOn(session: LockSession, key: string): HeldLock {
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

/**
 * Tries the locks of `keys` at once on the shared session, without waiting for any: the ones taken,
 * each held on that session. A failed statement closes the session (releasing what it held) and throws.
 */
async function tryLocks(keys: string[]): Promise<Map<string, HeldLock>> {
  const session = await sharedSession();
  clearTimeout(session.idleTimer);
  let rows: { key: string; taken: boolean }[];
  try {
    ({ rows } = await session.client.query<{ key: string; taken: boolean }>(
      // In the select list, so each row's try runs exactly once.
      "SELECT key, pg_try_advisory_lock(hashtext(key)) AS taken FROM unnest($1::text[]) AS key",
      [keys],
    ));
  } catch (error) {
    abandon(session, error);
    throw error;
  }
  const held = new Map<string, HeldLock>();
  for (const row of rows) {
    if (!row.taken) continue;
    session.held += 1;
    held.set(row.key, heldOn(session, row.key));
  }
  closeWhenIdle(session);
  return held;
}

/** Waits, with no connection of its own, for a lock another process holds (see the top of this file). */
function waitForLock(key: string, deadline: number): Promise<HeldLock> {
  const locks = state();
  const waited = new Promise<HeldLock>((taken, failed) => locks.waiting.set(key, { deadline, taken, failed }));
  if (!locks.polling) void pollWaiters();
  return waited;
}

/** The one loop per process that tries the waiters' locks again, one statement for all of them, until none waits. */
async function pollWaiters(): Promise<void> {
  const locks = state();
  locks.polling = true;
  try {
    while (locks.waiting.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS * (0.5 + Math.random())));
      // Only this loop removes waiters, so nothing changes under it between the statement and here.
      for (const [key, waiter] of locks.waiting) {
        if (Date.now() < waiter.deadline) continue;
        locks.waiting.delete(key);
        waiter.failed(new RefreshLockTimeoutError("lock"));
      }
      if (locks.waiting.size === 0) break;
      const batch = [...locks.waiting];
      let held: Map<string, HeldLock>;
      try {
        held = await tryLocks(batch.map(([key]) => key));
      } catch (error) {
        // The database failed under the statement: every waiter is told, as a refresh that finds the
        // database unreachable is; nothing was sent to the identity provider.
        for (const [key, waiter] of batch) {
          locks.waiting.delete(key);
          waiter.failed(error);
        }
        continue;
      }
      for (const [key, lock] of held) {
        locks.waiting.get(key)!.taken(lock);
        locks.waiting.delete(key);
      }
    }
  } finally {
    locks.polling = false;
    // The last waiters may have timed out with no lock held: let the session close when idle.
    void locks.session?.then(closeWhenIdle, () => undefined);
  }
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
      const held = (await tryLocks([key])).get(key) ?? (await waitForLock(key, deadline));
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
