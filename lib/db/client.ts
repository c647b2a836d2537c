// The Prisma client, one per process, over node-postgres (Prisma 7 requires a driver adapter).
//
// Secret columns are left out of every query by default (`omit`); only lib/oauth/token-vault.ts
// asks for them, so a careless `findMany` elsewhere can never carry ciphertext into a page.
import "server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";
import { poolSize, POOLS, reportOpenConnections } from "./connection-budget";
import { PrismaClient } from "./generated/client";

function createClient() {
  // The pool is made here, not by the adapter, so that /api/ready can count what it holds.
  const pool = new pg.Pool({
    connectionString: env().DATABASE_URL,
    max: poolSize("prisma", env()),
    application_name: PRODUCT.postgresApplicationName(POOLS.prisma.purpose),
    // Fail fast when the database is unreachable instead of hanging a request.
    connectionTimeoutMillis: 5_000,
  });
  reportOpenConnections("prisma", () => pool.totalCount);
  return createPrismaClient(new PrismaPg(pool, { disposeExternalPool: true }));
}

/** A Prisma client over the given adapter, with the app's defaults (also lib/db/ingest-pool.ts). */
export function createPrismaClient(adapter: PrismaPg) {
  return new PrismaClient({
    adapter,
    omit: { tokenGrant: { accessTokenEncrypted: true, refreshTokenEncrypted: true } },
  });
}

export type Db = ReturnType<typeof createClient>;
/**
 * The client inside `db().$transaction(async (tx) => ...)`. Functions that take a `Tx` work both
 * inside a transaction and on `db()` itself.
 */
export type Tx = Omit<Db, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;

// In development Next.js reloads modules; keep one client (and one pool) across reloads.
const globalForDb = globalThis as unknown as { partnerAppDb?: Db };

export function db(): Db {
  globalForDb.partnerAppDb ??= createClient();
  return globalForDb.partnerAppDb;
}
