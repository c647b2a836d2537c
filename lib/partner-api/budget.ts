// Each install's rate budget at the partner API, shared by every app instance and the worker.
//
// contract §8: 1,000 requests per 60 seconds by default, per install; clients apply backoff. How the
// service counts is not shown (a fixed window, a sliding one, a token bucket?), so the app keeps to
// the rule that is safe against all of them: never more than the quota in ANY span of the window's
// length. It does so with GCRA (the generic cell rate algorithm, a token bucket kept as a single
// timestamp, the "theoretical arrival time" or TAT) in one row per install, in PostgreSQL:
//
//   - the steady rate is (1 - margin) × quota per window: one request every `interval`;
//   - a burst of up to margin/2 × quota may go at once when the budget is full;
//   - so any window holds at most quota × (1 - margin/2) of the app's requests, and the other half
//     of the margin absorbs the spread of network delays between this clock and the service's.
//
// Hand-written, because no maintained library offers an exact budget shared through PostgreSQL:
// rate-limiter-flexible's PostgreSQL store (used for sign-in limits, lib/rate-limit.ts) counts in
// fixed windows, which lets up to twice the limit through across a window's edge, and a server that
// counts differently would answer 429; Bottleneck's cluster mode needs Redis and is unmaintained;
// p-queue and the like count per process. Every instance and the worker take from the same row,
// with one atomic statement per request (the database's clock, so app clocks may disagree).
//
// Priorities (issue 11): a page's call ("interactive") may use the whole burst and may reserve a
// slot ahead, up to its deadline; background work (sweeps, sync) may use only the half of the burst
// above the reserve, and reserves at most BACKGROUND_LOOKAHEAD_INTERVALS ahead, so a page finds
// budget at once even while a sync runs flat out. Within a process, each install has its own lane (below): one install's
// waiting never holds up another's calls, and a page's call goes before background calls queued
// for the same install.
import "server-only";
import { setTimeout as sleep } from "node:timers/promises";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";

export type Priority = "interactive" | "background";

/** contract §8's default, used until the service states the install's own budget. */
export const DEFAULT_QUOTA = 1_000;
export const DEFAULT_WINDOW_SECONDS = 60;

/** What a taken request may rely on, for reading the service's answer against it. */
export type BudgetGrant = {
  quota: number;
  windowSeconds: number;
  /** Milliseconds between requests at the steady rate. */
  intervalMs: number;
  /** Requests the full budget allows at once (the interactive burst). */
  burst: number;
  /** How long the budget made this request wait for its slot (not counting the lane's queue). */
  waitedMs: number;
  /** The budget's own cost: the round trip of the statement that took the slot. */
  statementMs: number;
};

/** No budget within the caller's deadline: the caller says "busy, try again in N s". */
export class BudgetExhaustedError extends Error {
  constructor(readonly retryInMs: number) {
    super(`no rate budget within the deadline; try again in ${Math.ceil(retryInMs / 1000)} s`);
    this.name = "BudgetExhaustedError";
  }
}

/**
 * How far ahead background work may reserve its next slot, in intervals. Without it, a walker that
 * asks a little after its slot came (its previous request still returning) would lose that time
 * for good, since GCRA counts from "now" once the slot has passed: a sequential walk measured 0.70
 * of the limit. Reserving the next slot or two keeps it on the schedule, and costs a page at most
 * that many of its reserved slots for one interval.
 */
const BACKGROUND_LOOKAHEAD_INTERVALS = 2;

type TakeRow = {
  quota: number;
  window_seconds: number;
  interval_ms: number;
  burst: number;
  wait_ms: number;
  granted: boolean;
  /** How long the row's declared hold still lasts (ms, by the database's clock); null when none does. */
  held_for_ms: number | null;
};

/**
 * One atomic statement: lock the install's row, decide, and move the TAT if the request may go
 * within `maxWaitMs` plus `lookaheadIntervals` intervals, and never later than `capMs` (the caller's deadline). Returns no row when the install has no
 * budget row yet.
 *
 * GCRA: a request may go at `max(tat, now) - tolerance`; taking it moves the TAT one interval on.
 * The tolerance is (burst - 1) intervals for a page, and keeps `ceil(burst / 2)` slots back for
 * background work. `clock_timestamp()` (not `now()`) is read after the row lock is granted, so a
 * request that queued for the lock is timed when it is decided.
 */
async function takeOnce(installRowId: string, priority: Priority, maxWaitMs: number, lookaheadIntervals: number, capMs: number): Promise<TakeRow | undefined> {
  const margin = env().API_BUDGET_MARGIN;
  const rows = await db().$queryRaw<TakeRow[]>`
    WITH budget AS (
      SELECT quota, window_seconds, tat, held_until, clock_timestamp() AS now
      FROM api_budgets WHERE install_row_id = ${installRowId}::uuid
      FOR UPDATE
    ), rule AS (
      SELECT budget.*,
             -- (budgetShape below computes the same two values for a size the service has just stated)
             window_seconds * 1000.0 / (quota * (1 - ${margin}::float8)) AS interval_ms,
             greatest(1, floor(quota * ${margin}::float8 / 2)) AS burst
      FROM budget
    ), decision AS (
      SELECT rule.*,
             greatest(tat, now) AS start,
             (CASE WHEN ${priority} = 'interactive' THEN burst - 1
                   ELSE greatest(0, burst - 1 - ceil(burst / 2.0)) END) * interval_ms AS tolerance_ms
      FROM rule
    ), verdict AS (
      SELECT decision.*,
             greatest(0, extract(epoch FROM start - now)::float8 * 1000 - tolerance_ms) AS wait_ms
      FROM decision
    ), taken AS (
      UPDATE api_budgets b SET tat = v.start + make_interval(secs => v.interval_ms / 1000)
      FROM verdict v
      WHERE b.install_row_id = ${installRowId}::uuid
        AND v.wait_ms <= least(${maxWaitMs}::float8 + ${lookaheadIntervals}::float8 * v.interval_ms, ${capMs}::float8)
      RETURNING b.install_row_id
    )
    SELECT quota, window_seconds, interval_ms::float8 AS interval_ms, burst::int AS burst, wait_ms::float8 AS wait_ms,
           EXISTS (SELECT 1 FROM taken) AS granted,
           CASE WHEN held_until > now THEN extract(epoch FROM held_until - now)::float8 * 1000 END AS held_for_ms
    FROM verdict`;
  return rows[0];
}

/** Creates the install's budget row at contract §8's default size, full (nothing spent). */
async function createBudget(installRowId: string): Promise<void> {
  await db().$executeRaw`
    INSERT INTO api_budgets (install_row_id, quota, window_seconds, tat)
    VALUES (${installRowId}::uuid, ${DEFAULT_QUOTA}, ${DEFAULT_WINDOW_SECONDS}, clock_timestamp())
    ON CONFLICT (install_row_id) DO NOTHING`;
}

async function take(installRowId: string, priority: Priority, maxWaitMs: number, capMs: number): Promise<TakeRow> {
  const lookahead = priority === "background" ? BACKGROUND_LOOKAHEAD_INTERVALS : 0;
  const row = await takeOnce(installRowId, priority, maxWaitMs, lookahead, capMs);
  if (row) return row;
  await createBudget(installRowId);
  const created = await takeOnce(installRowId, priority, maxWaitMs, lookahead, capMs);
  if (!created) throw new Error(`the budget of install ${installRowId} is gone (the install was deleted)`);
  return created;
}

// ----- lanes: the in-process queue of each install ----------------------------------------------
//
// One statement at a time per install per process: a thousand calls waiting for one install's row
// lock would otherwise hold a thousand pooled connections, and every other install's calls would
// wait for a connection. Interactive takers go first. A background taker told "not yet" makes the
// lane's background side sleep until its slot, so the process polls the row once per slot rather
// than once per waiting caller. Hand-written (a few lines) because per-key priority queues with a
// wake-up time are not what p-queue and its kin offer.

type Waiter = {
  priority: Priority;
  deadline: number;
  resolve: (grant: BudgetGrant) => void;
  reject: (error: unknown) => void;
  /**
   * What the budget has told this waiter to wait so far, and its statements' time. Time spent in the
   * lane's queue behind other callers' statements is neither: it is not waiting for budget.
   */
  budgetWaitMs: number;
  statementMs: number;
};

class Lane {
  private readonly interactive: Waiter[] = [];
  private readonly background: Waiter[] = [];
  private busy = false;
  private backgroundNotBefore = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly installRowId: string,
    private readonly onIdle: () => void,
  ) {}

  enqueue(waiter: Waiter): void {
    (waiter.priority === "interactive" ? this.interactive : this.background).push(waiter);
    this.pump();
  }

  private pump(): void {
    if (this.busy) return;
    const now = Date.now();
    let waiter = this.interactive.shift();
    if (!waiter && this.background.length > 0) {
      if (now < this.backgroundNotBefore) {
        this.timer ??= setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, this.backgroundNotBefore - now);
        return;
      }
      waiter = this.background.shift();
    }
    if (!waiter) {
      this.onIdle();
      return;
    }
    this.busy = true;
    void this.serve(waiter, now).finally(() => {
      this.busy = false;
      this.pump();
    });
  }

  private async serve(waiter: Waiter, now: number): Promise<void> {
    const remaining = waiter.deadline - now;
    // A page may reserve a slot ahead, leaving a second of its deadline for the request itself;
    // background work only within its short lookahead (in `take`).
    const maxWaitMs = waiter.priority === "interactive" ? Math.max(0, remaining - 1_000) : 0;
    let row: TakeRow;
    const started = performance.now();
    try {
      // Never a slot after the caller's deadline, lookahead or not: on a small budget two intervals
      // are a minute, longer than a cron run's time limit (lib/partner-api/client.ts withRunDeadline).
      row = await take(this.installRowId, waiter.priority, maxWaitMs, Math.max(0, remaining));
    } catch (error) {
      waiter.reject(error);
      return;
    }
    waiter.statementMs += performance.now() - started;
    noteHoldFromRow(this.installRowId, row.held_for_ms, Date.now() - (performance.now() - started));
    if (row.granted) {
      // The slot is reserved; waiting for it happens outside the lane.
      const waitMs = Math.ceil(row.wait_ms);
      const grant: BudgetGrant = {
        quota: row.quota,
        windowSeconds: row.window_seconds,
        intervalMs: row.interval_ms,
        burst: row.burst,
        waitedMs: waiter.budgetWaitMs + waitMs,
        statementMs: waiter.statementMs,
      };
      if (waitMs > 0) void sleep(waitMs).then(() => waiter.resolve(grant));
      else waiter.resolve(grant);
      return;
    }
    if (waiter.priority === "interactive" || now + row.wait_ms > waiter.deadline) {
      waiter.reject(new BudgetExhaustedError(row.wait_ms));
      return;
    }
    // Background, not yet: back to the head of its queue, and no background poll before its slot
    // comes within the lookahead.
    this.background.unshift(waiter);
    const waitMs = Math.max(1, Math.ceil(row.wait_ms - BACKGROUND_LOOKAHEAD_INTERVALS * row.interval_ms));
    waiter.budgetWaitMs += waitMs;
    this.backgroundNotBefore = Date.now() + waitMs;
  }
}

const lanes = new Map<string, Lane>();

/**
 * Waits until the install's budget allows one more request, and takes it. Throws
 * BudgetExhaustedError when that would be after `deadline` (epoch ms).
 */
export async function takeBudget(installRowId: string, priority: Priority, deadline: number): Promise<BudgetGrant> {
  const grant = await takeFromLane(installRowId, priority, deadline);
  // A slot reserved before this process met a 429 for the install would land inside the hold: take
  // a new one after it instead (other processes learn of the hold from the row).
  const held = heldUntil.get(installRowId);
  if (held !== undefined) {
    if (held.until > Date.now()) return takeBudget(installRowId, priority, deadline);
    heldUntil.delete(installRowId);
  }
  return grant;
}

function takeFromLane(installRowId: string, priority: Priority, deadline: number): Promise<BudgetGrant> {
  return new Promise((resolve, reject) => {
    let lane = lanes.get(installRowId);
    if (!lane) {
      const created = new Lane(installRowId, () => {
        if (lanes.get(installRowId) === created) lanes.delete(installRowId);
      });
      lanes.set(installRowId, created);
      lane = created;
    }
    lane.enqueue({ priority, deadline, resolve, reject, budgetWaitMs: 0, statementMs: 0 });
  });
}

// ----- believing the service ----------------------------------------------------------------------

/** The `RateLimit-*` headers of one answer (public-facts.md), each absent when not sent or not a number. */
export type RateLimitHeaders = { quota?: number; windowSeconds?: number; remaining?: number; resetsInSeconds?: number };

export function readRateLimitHeaders(headers: Headers): RateLimitHeaders {
  const number = (name: string) => {
    const raw = headers.get(name);
    if (raw === null || !/^\d+$/.test(raw.trim())) return undefined;
    return Number(raw);
  };
  return {
    quota: number("RateLimit-Quota"),
    windowSeconds: number("RateLimit-TimeWindow"),
    remaining: number("RateLimit-Remaining"),
    resetsInSeconds: number("RateLimit-ResetsIn"),
  };
}

/**
 * The longest hold the app believes. contract §8's window is 60 s, and a window resets within its
 * length, so a longer wait is not plausible (one service answered `RateLimit-ResetsIn: 99999999999`,
 * and 17 installs were held until the year 5195). Should the service really mean longer, the app
 * meets one more 429 a minute, which costs the service nothing. docs/spec-gaps.md A180.
 */
export const MAX_HOLD_MS = DEFAULT_WINDOW_SECONDS * 1000;

/**
 * Holds this process knows of, per install (epoch ms), for slots reserved before them; `noted` is
 * when this process learnt of it. The row's `held_until` is the truth every process follows: each
 * statement on the row (takeOnce) brings this map in line with it, so a hold cleared by staff
 * (clearBudgetHold) ends here too, at this process's next request for the install.
 */
const heldUntil = new Map<string, { until: number; noted: number }>();

/**
 * What a statement read of the row's hold, begun at `statementBegan` (epoch ms). A hold this process
 * declared after the statement began is kept: the statement could not have seen it yet.
 */
function noteHoldFromRow(installRowId: string, heldForMs: number | null, statementBegan: number): void {
  const known = heldUntil.get(installRowId);
  if (heldForMs !== null) heldUntil.set(installRowId, { until: Date.now() + heldForMs, noted: Date.now() });
  else if (known && known.noted < statementBegan) heldUntil.delete(installRowId);
}

/**
 * Holds every request of the install (all instances) until `holdMs` from now (at most MAX_HOLD_MS),
 * after which the budget starts again from empty: after a 429, or when the service says fewer
 * requests remain than the app's pace would send. `said` is what the service said, for staff (the
 * console's rate budget) and the log. Returns the hold it applied.
 */
async function holdBudget(installRowId: string, requestedMs: number, grant: BudgetGrant, said: string): Promise<number> {
  const holdMs = Math.min(Math.max(0, requestedMs), MAX_HOLD_MS);
  if (requestedMs > MAX_HOLD_MS) {
    logger.warn({ installRowId, serviceSaid: said, heldMs: holdMs }, "the partner API said to wait longer than a rate window; holding the install for one window only");
  }
  const until = Date.now() + holdMs;
  heldUntil.set(installRowId, { until: Math.max(heldUntil.get(installRowId)?.until ?? 0, until), noted: Date.now() });
  // The TAT a full tolerance past the hold's end: the budget starts again from empty, one request
  // per interval, so the callers that were waiting do not all go at once when it ends.
  const pushMs = holdMs + (grant.burst - 1) * grant.intervalMs;
  await db().$executeRaw`
    WITH hold AS (SELECT clock_timestamp() + make_interval(secs => ${holdMs / 1000}::float8) AS ends)
    UPDATE api_budgets SET
      tat = greatest(tat, clock_timestamp() + make_interval(secs => ${pushMs / 1000}::float8)),
      hold_said = CASE WHEN held_until IS NULL OR held_until <= hold.ends THEN ${said} ELSE hold_said END,
      held_until = greatest(held_until, hold.ends)
    FROM hold
    WHERE install_row_id = ${installRowId}::uuid`;
  return holdMs;
}

/**
 * Staff's "clear the rate-limit hold" (lib/admin/actions.ts): the budget is whole again at once and
 * the hold is gone, in the row (so every process lets requests go at its next one) and here.
 * Returns whether a hold was in force.
 */
export async function clearBudgetHold(installRowId: string): Promise<boolean> {
  heldUntil.delete(installRowId);
  const rows = await db().$queryRaw<{ was_held: boolean }[]>`
    UPDATE api_budgets b SET tat = least(b.tat, clock_timestamp()), held_until = NULL, hold_said = NULL
    FROM (SELECT install_row_id, held_until > clock_timestamp() AS was_held FROM api_budgets WHERE install_row_id = ${installRowId}::uuid FOR UPDATE) old
    WHERE b.install_row_id = old.install_row_id
    RETURNING coalesce(old.was_held, false) AS was_held`;
  return rows[0]?.was_held ?? false;
}

/**
 * Reads one answer's `RateLimit-*` headers against the budget. Usually costs nothing: the database
 * is written only when the service states another size than the row holds, or counts more of the
 * install's requests than the app's pace allows for (another client of the install, an app instance
 * restored from an old version, a service that counts differently): then the service is believed.
 */
export async function observeAnswer(installRowId: string, taken: BudgetGrant, headers: RateLimitHeaders): Promise<void> {
  const { quota, windowSeconds, remaining, resetsInSeconds } = headers;
  let grant = taken;
  if ((quota !== undefined && quota > 0 && quota !== grant.quota) || (windowSeconds !== undefined && windowSeconds > 0 && windowSeconds !== grant.windowSeconds)) {
    await resizeBudget(installRowId, quota ?? grant.quota, windowSeconds ?? grant.windowSeconds);
    // Judge Remaining against the size the service just stated, not the one this request was taken under.
    grant = { ...grant, ...budgetShape(quota ?? grant.quota, windowSeconds ?? grant.windowSeconds) };
  }
  if (remaining === undefined || resetsInSeconds === undefined) return;
  // ResetsIn is whole seconds, rounded up: the window may end up to a second sooner. Compare with
  // the shortest window it can mean; hold for the longest.
  const paceWouldSend = (Math.max(0, resetsInSeconds - 1) * 1000) / grant.intervalMs;
  if (remaining < paceWouldSend) {
    await holdBudget(installRowId, resetsInSeconds * 1000 - remaining * grant.intervalMs, grant, `RateLimit-Remaining: ${remaining}, RateLimit-ResetsIn: ${resetsInSeconds}`);
  }
}

/** A budget's interval and burst from its size: the same formulas as the `rule` step of `takeOnce`. */
function budgetShape(quota: number, windowSeconds: number): Pick<BudgetGrant, "quota" | "windowSeconds" | "intervalMs" | "burst"> {
  const margin = env().API_BUDGET_MARGIN;
  return { quota, windowSeconds, intervalMs: (windowSeconds * 1000) / (quota * (1 - margin)), burst: Math.max(1, Math.floor((quota * margin) / 2)) };
}

/**
 * After a 429: nothing more for the install until the service's window resets, as RateLimit-ResetsIn
 * says (at most MAX_HOLD_MS), or for the client's backoff when it says nothing. Returns the hold.
 */
export function holdAfterRateLimited(installRowId: string, grant: BudgetGrant, waitMs: number, resetsInSeconds: number | undefined): Promise<number> {
  return holdBudget(installRowId, waitMs, grant, resetsInSeconds === undefined ? "429 without RateLimit-ResetsIn" : `429 with RateLimit-ResetsIn: ${resetsInSeconds}`);
}

/**
 * Sets the install's budget size as the service states it (`rateLimit` /
 * `rateLimitIntervalInSeconds` of /consumers/me, or the `RateLimit-*` headers).
 */
export async function resizeBudget(installRowId: string, quota: number, windowSeconds: number): Promise<void> {
  if (!(quota > 0 && windowSeconds > 0)) return;
  await db().$executeRaw`
    INSERT INTO api_budgets (install_row_id, quota, window_seconds, tat)
    VALUES (${installRowId}::uuid, ${quota}, ${windowSeconds}, clock_timestamp())
    ON CONFLICT (install_row_id) DO UPDATE SET quota = excluded.quota, window_seconds = excluded.window_seconds
    WHERE api_budgets.quota <> excluded.quota OR api_budgets.window_seconds <> excluded.window_seconds`;
}
