// Each install's request budget and the limiter that enforces it (contract §8: "1,000 requests per 60 seconds by
// default, per install; one operator's traffic cannot exhaust another's budget").
//
// The limiter is a fixed window per install on the sandbox clock (README decision 14): a window opens at the first
// request after the previous one ended and lasts `windowSeconds`; every request in it counts, refused ones included.
// That is the strictest realistic server for a client's budget: a client that spends its whole budget at the end of
// one window and again at the start of the next is refused, where a sliding or token-bucket server would not refuse
// it; a client that keeps within its budget over ANY span of `windowSeconds` is never refused.
//
// The budget itself is configurable for tests (README decision 36): a default for every install without an override
// (SANDBOX_RATE_LIMIT / SANDBOX_RATE_WINDOW_SECONDS, changed with PUT /_sandbox/rate-limit) and an override per install
// (PUT /_sandbox/installs/:id/rate-limit). Both live in memory: a restart or POST /_sandbox/reset goes back to the
// configured default, like the other test devices.
import { z } from "zod";

export interface RateBudget {
  /** Requests allowed per window. */
  limit: number;
  windowSeconds: number;
}

/** PUT /_sandbox/rate-limit and /_sandbox/installs/:id/rate-limit: both fields, integers. */
export const rateBudgetSchema = z
  .object({
    limit: z.number().int("limit must be an integer").min(1, "limit must be between 1 and 100000").max(100_000, "limit must be between 1 and 100000"),
    windowSeconds: z
      .number()
      .int("windowSeconds must be an integer")
      .min(1, "windowSeconds must be between 1 and 3600")
      .max(3600, "windowSeconds must be between 1 and 3600"),
  })
  .strict();

/** What the limiter decided for one request; the RateLimit-* headers are written from it. */
export interface RateDecision extends RateBudget {
  /** Requests left in the current window after this one (never below 0). */
  remaining: number;
  /** Whole seconds until the current window ends (ceil). */
  resetsInSeconds: number;
  /** This request is over the budget: answer 429. */
  limited: boolean;
  /** When the current window started (sandbox clock, ms): request counters group requests by it. */
  windowStartMs: number;
}

interface Window {
  startMs: number;
  /** Every request the limiter saw in this window, refused ones included. */
  count: number;
}

export class RateBudgets {
  private defaultBudget: RateBudget;
  private readonly overrides = new Map<number, RateBudget>();
  private readonly windows = new Map<number, Window>();

  constructor(private readonly configured: RateBudget) {
    this.defaultBudget = { ...configured };
  }

  /** The budget every install without its own has. */
  get default(): RateBudget {
    return { ...this.defaultBudget };
  }

  /** Changes the default; installs with an override keep theirs. */
  setDefault(budget: RateBudget): void {
    this.defaultBudget = { ...budget };
  }

  /** The install's own budget, if it has one. */
  overrideOf(installId: number): RateBudget | null {
    const budget = this.overrides.get(installId);
    return budget ? { ...budget } : null;
  }

  setOverride(installId: number, budget: RateBudget): void {
    this.overrides.set(installId, { ...budget });
  }

  /** Back to the default; returns whether there was an override. */
  clearOverride(installId: number): boolean {
    return this.overrides.delete(installId);
  }

  listOverrides(): { installId: number; budget: RateBudget }[] {
    return [...this.overrides].map(([installId, budget]) => ({ installId, budget: { ...budget } })).sort((a, b) => a.installId - b.installId);
  }

  /** What applies to the install now: its own budget, else the default. */
  budgetOf(installId: number): RateBudget {
    return { ...(this.overrides.get(installId) ?? this.defaultBudget) };
  }

  /**
   * Counts one request of the install and decides it. A budget changed mid-window applies at once to the window
   * already open (decision 36): its start and count are kept, so `remaining` = new limit − requests so far, and it
   * ends `windowSeconds` (the new length) after it started, at once if that is already past.
   */
  take(installId: number, nowMs: number): RateDecision {
    const budget = this.budgetOf(installId);
    let window = this.windows.get(installId);
    if (!window || nowMs >= window.startMs + budget.windowSeconds * 1000) {
      window = { startMs: nowMs, count: 0 };
      this.windows.set(installId, window);
    }
    window.count += 1;
    return {
      ...budget,
      remaining: Math.max(0, budget.limit - window.count),
      resetsInSeconds: Math.max(0, Math.ceil((window.startMs + budget.windowSeconds * 1000 - nowMs) / 1000)),
      limited: window.count > budget.limit,
      windowStartMs: window.startMs,
    };
  }

  /** The install's open window, without counting a request (control API). Null when none is open. */
  peek(installId: number, nowMs: number): { startMs: number; count: number; remaining: number; resetsInSeconds: number } | null {
    const budget = this.budgetOf(installId);
    const window = this.windows.get(installId);
    if (!window || nowMs >= window.startMs + budget.windowSeconds * 1000) return null;
    return {
      startMs: window.startMs,
      count: window.count,
      remaining: Math.max(0, budget.limit - window.count),
      resetsInSeconds: Math.ceil((window.startMs + budget.windowSeconds * 1000 - nowMs) / 1000),
    };
  }

  /** POST /_sandbox/reset: the configured default, no overrides, no open windows. */
  reset(): void {
    this.defaultBudget = { ...this.configured };
    this.overrides.clear();
    this.windows.clear();
  }
}
