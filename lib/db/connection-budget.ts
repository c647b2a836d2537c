// Every connection to PostgreSQL that an app process and a worker process may hold: each pool, its
// bound, and where the bound comes from. The pools take their sizes from here (`poolSize`), so the
// totals cannot drift from what is opened; tests/unit/connection-budget.test.ts fails on a pool in
// lib/ that is not listed or that sizes itself. docs/operations.md "Database" gives the formula;
// /api/ready compares this instance's total with what the server allows (lib/health.ts).
//
// Not server-only: `npm run db:migrate` (plain Node) opens the release step's connections.

/** The settings that size pools; passed in (`env()`), so this module reads no environment itself. */
export type PoolSettings = { DATABASE_POOL_SIZE: number; WEBHOOK_DATABASE_POOL_SIZE: number };

type Pool = {
  /** The module that opens it. */
  file: string;
  /** The processes that open it (each on first use). "db:migrate" runs once per release, before it rolls. */
  opens: "app" | "worker" | "app and worker" | "db:migrate";
  /** Its bound: a setting, or a fixed number with the reason for it. */
  size: keyof PoolSettings | number;
  /** pg_stat_activity's application_name: `PRODUCT.postgresApplicationName(purpose)`. */
  purpose: string;
};

export const POOLS = {
  /** Prisma's: pages, jobs, sign-in, everything not below. */
  prisma: { file: "lib/db/client.ts", opens: "app and worker", size: "DATABASE_POOL_SIZE", purpose: "prisma" },
  /** The webhook ingest's, so that a burst of deliveries never waits behind pages (nor they behind it). */
  webhookIngest: { file: "lib/db/ingest-pool.ts", opens: "app", size: "WEBHOOK_DATABASE_POOL_SIZE", purpose: "webhook ingest" },
  /** The sign-in and redirect_uri limits' store: one upsert per attempt, consulted exactly under attack. */
  signInLimits: { file: "lib/rate-limit.ts", opens: "app", size: 2, purpose: "sign-in limits" },
  /** pg-boss in an app process: it only enqueues (after its first job sent or cron route served). */
  jobEngineApp: { file: "lib/jobs/enqueue.ts", opens: "app", size: 2, purpose: "job engine" },
  /** pg-boss in the worker: fetching, settling and maintenance (a running job holds none). */
  jobEngineWorker: { file: "lib/jobs/enqueue.ts", opens: "worker", size: 4, purpose: "job engine" },
  /** One session holds every refresh lock of the process, and its waits cost nothing more (lib/oauth/refresh-lock.ts). */
  refreshLock: { file: "lib/oauth/refresh-lock.ts", opens: "app and worker", size: 1, purpose: "refresh lock" },
  /** The migration runner's one connection, closed before the job schema's pool opens. */
  migrations: { file: "lib/db/migrate.ts", opens: "db:migrate", size: 1, purpose: "migrations" },
  /** pg-boss creating and migrating its schema. */
  jobSchema: { file: "lib/jobs/schema.ts", opens: "db:migrate", size: 2, purpose: "job schema" },
} as const satisfies Record<string, Pool>;

export type PoolName = keyof typeof POOLS;

/** A pool's bound. A pool sized by a setting needs the settings (`env()`). */
export function poolSize(name: PoolName, settings?: PoolSettings): number {
  const { size } = POOLS[name] as Pool;
  if (typeof size === "number") return size;
  if (!settings) throw new Error(`the ${name} pool's size comes from ${size}: pass the settings`);
  return settings[size];
}

/** The most connections one process of the role holds, and by which pool. */
export function processBudget(role: "app" | "worker", settings: PoolSettings): { total: number; pools: Partial<Record<PoolName, number>> } {
  const pools: Partial<Record<PoolName, number>> = {};
  let total = 0;
  for (const name of Object.keys(POOLS) as PoolName[]) {
    const { opens } = POOLS[name] as Pool;
    if (opens !== role && opens !== "app and worker") continue;
    pools[name] = poolSize(name, settings);
    total += pools[name];
  }
  return { total, pools };
}

// ----- what this process holds now, for /api/ready ----------------------------------------------

// On globalThis: Next.js bundles routes separately, and each pool registers where it is opened.
const OPEN_KEY = Symbol.for("partner-app.open-connections");
const globalWithOpen = globalThis as typeof globalThis & { [OPEN_KEY]?: Map<PoolName, () => number> };

/** Called by a pool once it exists: how many connections it holds now (pg-pool's totalCount). */
export function reportOpenConnections(name: PoolName, count: () => number): void {
  (globalWithOpen[OPEN_KEY] ??= new Map()).set(name, count);
}

/** The connections this process's pools hold now. */
export function openConnections(): number {
  let open = 0;
  for (const count of globalWithOpen[OPEN_KEY]?.values() ?? []) open += count();
  return open;
}
