// The refresh lock itself (lib/oauth/refresh-lock.ts), called in this process against the stack's
// PostgreSQL: what it promises, counted in PostgreSQL's own views, never timed.
// - many refreshes of different installs at once hold their locks on one connection;
// - two callers for one install in one process run one after the other (a session's advisory locks
//   are re-entrant, so the module must not let the second "take" the lock the first holds);
// - a lock another process holds is waited for, and taken when it is let go or its holder dies;
// - however many refreshes wait for another process's locks, this process holds one connection for
//   refresh locks (counted in pg_stat_activity by the connection's application_name);
// - at most REFRESH_CONCURRENCY run at once; the rest wait their turn.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { closeSql, sql, stack } from "../helpers/stack";

const { withRefreshLock, LOCK_WAIT_MS, RefreshLockTimeoutError } = await import("@/lib/oauth/refresh-lock");
const { env } = await import("@/lib/env");
const { PRODUCT } = await import("@/lib/config/product");

afterAll(closeSql);

/** A promise and the function that settles it: work a test holds open until it has looked. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The connections (server processes) that hold advisory locks. */
const lockHolders = async () =>
  (await sql<{ n: number }>("SELECT count(DISTINCT pid)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted"))[0]!.n;
const advisoryLocks = async (granted: boolean) =>
  (await sql<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted = $1", [granted]))[0]!.n;
/** The refresh lock's connections open now (this process's and, if it has one open, the stack's app's). */
const refreshLockConnections = async () =>
  (await sql<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1", [PRODUCT.postgresApplicationName("refresh lock")]))[0]!.n;

/** "Another process": a connection of its own that takes the install's lock as any instance would. */
async function otherProcessHolding(installs: string[], name = "refresh-lock test: another instance"): Promise<pg.Client> {
  const other = new pg.Client({ connectionString: stack.databaseUrl, application_name: name });
  other.on("error", () => {}); // a test may end its session from the server's side
  await other.connect();
  for (const install of installs) await other.query("SELECT pg_advisory_lock(hashtext($1))", [`refresh:${install}`]);
  return other;
}

describe("the refresh lock", () => {
  it("holds the locks of 20 refreshes under way on one connection", async () => {
    const release = gate();
    let running = 0;
    const refreshes = Array.from({ length: 20 }, () =>
      withRefreshLock(randomUUID(), async () => {
        running += 1;
        await release.opened;
      }),
    );
    await until("all 20 to hold their lock", async () => running, (n) => n === 20);
    expect(await advisoryLocks(true)).toBe(20);
    expect(await lockHolders()).toBe(1);
    release.open();
    await Promise.all(refreshes);
    expect(await advisoryLocks(true)).toBe(0);
  });

  it("runs two callers for one install in this process one after the other", async () => {
    const install = randomUUID();
    const order: string[] = [];
    const first = gate();
    const a = withRefreshLock(install, async () => {
      order.push("a starts");
      await first.opened;
      order.push("a ends");
    });
    const b = withRefreshLock(install, async () => {
      order.push("b starts");
    });
    await until("the first to start", async () => order.length, (n) => n >= 1);
    // The second has had every chance to start, had it been let in.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(order).toEqual(["a starts"]);
    first.open();
    await Promise.all([a, b]);
    expect(order).toEqual(["a starts", "a ends", "b starts"]);
  });

  it("waits for a lock another process holds, and takes it when it is let go", async () => {
    const install = randomUUID();
    const other = await otherProcessHolding([install]);
    try {
      let ran = false;
      const waiting = withRefreshLock(install, async () => {
        ran = true;
      });
      // It has had every chance to run, had it not waited.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(ran).toBe(false);
      await other.query("SELECT pg_advisory_unlock(hashtext($1))", [`refresh:${install}`]);
      await waiting;
      expect(ran).toBe(true);
      expect(await advisoryLocks(true)).toBe(0);
    } finally {
      await other.end();
    }
  });

  it("holds one connection for refresh locks while 12 refreshes wait for another process's locks; they run when it lets go or dies", async () => {
    const WAITING = 12;
    const installs = Array.from({ length: WAITING }, () => randomUUID());
    // The stack's app may still have its own lock connection open from an earlier file (it closes
    // after 10 s idle): what counts is what this process adds.
    const before = await refreshLockConnections();
    const holder = await otherProcessHolding(installs.slice(0, WAITING / 2));
    const dying = await otherProcessHolding(installs.slice(WAITING / 2), "refresh-lock test: an instance that dies");
    try {
      const ran = new Set<string>();
      const refreshes = installs.map((install) => withRefreshLock(install, async () => void ran.add(install)));
      // Count the lock connections for a while as the waits go on: each waiter of the earlier
      // releases opened one of its own at once.
      let most = 0;
      for (let i = 0; i < 20; i++) {
        most = Math.max(most, await refreshLockConnections());
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(ran.size).toBe(0);
      expect(most - before).toBeLessThanOrEqual(1);
      // Nothing of this process is blocked inside PostgreSQL waiting for a lock.
      expect(await advisoryLocks(false)).toBe(0);

      // One holder lets go; the other dies (its session is ended under it, as a killed process's is,
      // and PostgreSQL releases its locks).
      await holder.query("SELECT pg_advisory_unlock_all()");
      await sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", ["refresh-lock test: an instance that dies"]);
      await Promise.all(refreshes);
      expect(ran.size).toBe(WAITING);
      expect(await advisoryLocks(true)).toBe(0);
    } finally {
      await holder.end();
      await dying.end().catch(() => undefined);
    }
  });

  it(`gives up after LOCK_WAIT_MS (${LOCK_WAIT_MS} ms) when another process holds the lock that long, having run nothing`, async () => {
    const install = randomUUID();
    const other = await otherProcessHolding([install]);
    try {
      let ran = false;
      await expect(withRefreshLock(install, async () => void (ran = true))).rejects.toBeInstanceOf(RefreshLockTimeoutError);
      expect(ran).toBe(false);
      // Nothing of it is left behind: the other process's lock is the only one.
      expect(await advisoryLocks(true)).toBe(1);
    } finally {
      await other.end();
    }
  }, LOCK_WAIT_MS + 15_000);

  it(`runs at most REFRESH_CONCURRENCY (${env().REFRESH_CONCURRENCY}) at once; the others wait for a slot`, async () => {
    const limit = env().REFRESH_CONCURRENCY;
    const release = gate();
    let running = 0;
    let most = 0;
    const refreshes = Array.from({ length: limit + 5 }, () =>
      withRefreshLock(randomUUID(), async () => {
        running += 1;
        most = Math.max(most, running);
        await release.opened;
        running -= 1;
      }),
    );
    await until("the first refreshes to hold their slots", async () => running, (n) => n === limit);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(running).toBe(limit);
    release.open();
    await Promise.all(refreshes);
    expect(most).toBe(limit);
  });
});
