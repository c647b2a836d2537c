// Rate limits that hold across app instances: counters in PostgreSQL (the `rate_limits` table),
// kept by rate-limiter-flexible's PostgreSQL store, whose one upsert per attempt is atomic, so
// concurrent requests on any number of instances are all counted.
//
// Each limit counts attempts per key in a fixed window. When a key uses up its window, it is locked
// out; every further lock-out of the same key within a day lasts twice as long as the last one
// (up to an hour), so a slow, patient guesser gets slower and slower.
//
// The store gets its own small connection pool: the limiter is consulted exactly when the app is
// under attack, and must neither wait behind nor crowd out the queries of genuine work (webhooks,
// pages) in Prisma's pool. If PostgreSQL is unreachable, an in-memory limiter per instance takes
// over (the library's `insuranceLimiter`), so limits still apply, per instance, rather than none.
import "server-only";
import pg from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { PRODUCT } from "@/lib/config/product";
import { poolSize, POOLS, reportOpenConnections } from "@/lib/db/connection-budget";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";

/** The table prisma/migrations creates (model RateLimit); the library is told it exists. */
const TABLE = "rate_limits";
const MAX_LOCKOUT_SECONDS = 3600;
const LOCKOUT_MEMORY_SECONDS = 24 * 3600;

export type LimitVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export type LimitRule = {
  /** Names the counter in the table (`<name>:<key>`); one per kind of limit. */
  name: string;
  attempts: number;
  windowSeconds: number;
  /** The first lock-out when the window is used up; later ones double. Without it: until the window ends. */
  lockoutSeconds?: number;
};

const globalForLimits = globalThis as unknown as { partnerAppLimitPool?: pg.Pool };

function limitPool(): pg.Pool {
  if (!globalForLimits.partnerAppLimitPool) {
    const pool = new pg.Pool({
      connectionString: env().DATABASE_URL,
      max: poolSize("signInLimits"),
      application_name: PRODUCT.postgresApplicationName(POOLS.signInLimits.purpose),
      connectionTimeoutMillis: 2_000,
    });
    reportOpenConnections("signInLimits", () => pool.totalCount);
    globalForLimits.partnerAppLimitPool = pool;
  }
  return globalForLimits.partnerAppLimitPool;
}

function storeLimiter(keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
  return new RateLimiterPostgres({
    storeClient: limitPool(),
    storeType: "pool",
    tableName: TABLE,
    tableCreated: true,
    keyPrefix,
    points,
    duration,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
  });
}

export class BackoffLimit {
  private readonly attempts: RateLimiterAbstract;
  private readonly lockouts: RateLimiterAbstract | undefined;

  constructor(readonly rule: LimitRule) {
    this.attempts = storeLimiter(rule.name, rule.attempts, rule.windowSeconds);
    this.lockouts = rule.lockoutSeconds ? storeLimiter(`${rule.name}_lockouts`, 1_000_000, LOCKOUT_MEMORY_SECONDS) : undefined;
  }

  /** Counts one attempt for `key`; refused when the key's window is used up or it is locked out. */
  async take(key: string): Promise<LimitVerdict> {
    try {
      await this.attempts.consume(key);
      return { allowed: true };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      // The one request that crosses the limit (the upsert is atomic, so exactly one sees
      // attempts + 1) starts the lock-out; the others only read how long it has left.
      if (this.lockouts && rejection.consumedPoints === this.rule.attempts + 1) {
        const seconds = await this.lockOut(key);
        return { allowed: false, retryAfterSeconds: seconds };
      }
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
    }
  }

  /** Forgets the key's attempts (e.g. after a successful sign-in). Its lock-out history stays. */
  async clear(key: string): Promise<void> {
    await this.attempts.delete(key).catch((error: unknown) => logger.warn({ err: error, limit: this.rule.name }, "could not clear a rate-limit counter"));
  }

  /**
   * Refuses the key for `seconds`, whatever its count (a device cookie that was replaced). Its
   * lock-out history is left alone: this is no lock-out of a guesser.
   */
  async retire(key: string, seconds: number): Promise<void> {
    await this.attempts.block(key, seconds).catch((error: unknown) => logger.warn({ err: error, limit: this.rule.name }, "could not retire a rate-limit key"));
  }

  private async lockOut(key: string): Promise<number> {
    const previous = await this.lockouts!.consume(key).then(
      (res) => res.consumedPoints - 1,
      () => 0,
    );
    const seconds = Math.min(this.rule.lockoutSeconds! * 2 ** Math.min(previous, 16), MAX_LOCKOUT_SECONDS);
    await this.attempts.block(key, seconds);
    logger.warn({ limit: this.rule.name, lockoutSeconds: seconds, previousLockouts: previous }, "rate limit reached: locked out");
    return seconds;
  }
}

let limits: { signInAddress: BackoffLimit; signInAccount: BackoffLimit; signInDevice: BackoffLimit; callbackAddress: BackoffLimit } | undefined;

/** The app's limits, built from the environment once per process. */
export function rateLimits() {
  if (limits) return limits;
  const e = env();
  limits = {
    signInAddress: new BackoffLimit({
      name: "sign_in_address",
      attempts: e.SIGN_IN_ATTEMPTS_PER_ADDRESS,
      windowSeconds: e.SIGN_IN_WINDOW_SECONDS,
      lockoutSeconds: e.SIGN_IN_LOCKOUT_SECONDS,
    }),
    signInAccount: new BackoffLimit({
      name: "sign_in_account",
      attempts: e.SIGN_IN_ATTEMPTS_PER_ACCOUNT,
      windowSeconds: e.SIGN_IN_WINDOW_SECONDS,
      lockoutSeconds: e.SIGN_IN_LOCKOUT_SECONDS,
    }),
    // A known browser's own budget (lib/auth/staff-device.ts), keyed by its device id: counted
    // instead of the address's and the account's, so strangers' failures cannot lock that browser out.
    signInDevice: new BackoffLimit({
      name: "sign_in_device",
      attempts: e.SIGN_IN_ATTEMPTS_PER_DEVICE,
      windowSeconds: e.SIGN_IN_WINDOW_SECONDS,
      lockoutSeconds: e.SIGN_IN_LOCKOUT_SECONDS,
    }),
    // A fixed window without lock-outs: an operator behind a busy NAT recovers within the minute.
    callbackAddress: new BackoffLimit({ name: "callback_address", attempts: e.CALLBACK_REQUESTS_PER_MINUTE, windowSeconds: 60 }),
  };
  return limits;
}
