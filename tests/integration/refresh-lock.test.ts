// The refresh lock itself (lib/oauth/refresh-lock.ts), called in this process against the stack's
// PostgreSQL: what it promises, counted in PostgreSQL's own views, never timed.
// - many refreshes of different installs at once hold their locks on one connection;
// - two callers for one install in one process run one after the other (a session's advisory locks
//   are re-entrant, so the module must not let the second "take" the lock the first holds);
// - a lock another process holds is waited for, blocked in PostgreSQL (a waiting lock in pg_locks),
//   and taken when it is let go;
// - at most REFRESH_CONCURRENCY run at once; the rest wait their turn.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { closeSql, sql, stack } from "../helpers/stack";

const { withRefreshLock } = await import("@/lib/oauth/refresh-lock");
const { env } = await import("@/lib/env");

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

  it("waits in PostgreSQL for a lock another process holds, and takes it when it is let go", async () => {
    const install = randomUUID();
    const other = new pg.Client({ connectionString: stack.databaseUrl });
    await other.connect();
    try {
      await other.query("SELECT pg_advisory_lock(hashtext($1))", [`refresh:${install}`]);
      let ran = false;
      const waiting = withRefreshLock(install, async () => {
        ran = true;
      });
      await until("the refresh to wait for the lock", () => advisoryLocks(false), (n) => n === 1);
      expect(ran).toBe(false);
      await other.query("SELECT pg_advisory_unlock(hashtext($1))", [`refresh:${install}`]);
      await waiting;
      expect(ran).toBe(true);
      expect(await advisoryLocks(false)).toBe(0);
    } finally {
      await other.end();
    }
  });

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
