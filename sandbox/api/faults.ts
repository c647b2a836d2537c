// Faults on partner API routes, for a while (control API: POST/GET/DELETE /_sandbox/api-faults; README decision 37).
// Contract §8 says "clients apply backoff" and public-facts.md that a 429 comes without Retry-After: the app's client
// must be proven against 429 storms (with and without RateLimit-ResetsIn), 5xx storms, slow answers and requests that
// are never answered. In memory only: a restart or POST /_sandbox/reset clears every armed fault.
//
// Faults play a gateway in front of the limiter: they apply after the access token is resolved (so they know the
// install, and a bad token still gets 401) and before the rate limit. A request a fault answers (429, 500, 503) or
// swallows (timeout) therefore does not count against the install's budget; a `latency` request is only delayed, then
// goes through the limiter and is answered as usual.
import { z } from "zod";

export const API_FAULT_MODES = ["rate-limited", "error500", "error503", "latency", "timeout"] as const;
export type ApiFaultMode = (typeof API_FAULT_MODES)[number];

/** Default wait of mode "latency" when latencyMs is not given. */
export const DEFAULT_LATENCY_MS = 1000;
/** How long a `timeout` fault holds a request at most (default and cap), when the client does not give up first. */
export const MAX_HOLD_MS = 120_000;

/**
 * The API path under /api/v1, matched exactly or as a prefix at a "/" boundary: "/charges" matches "/charges" and
 * "/charges/12", not "/charges-archive"; "/" matches every route. The query string is never part of it.
 */
const faultPathSchema = z
  .string()
  .regex(/^\/(?:[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*)?$/, 'path must be an API path under /api/v1 such as "/charges" or "/" (no query, no trailing "/")')
  .refine((path) => path !== "/api" && !path.startsWith("/api/"), 'path is relative to /api/v1: write "/charges", not "/api/v1/charges"');

export const apiFaultRequestSchema = z
  .object({
    path: faultPathSchema,
    mode: z.enum(API_FAULT_MODES),
    /** Wall-clock milliseconds from arming during which matching requests are affected. */
    forMs: z.number().int().min(1).max(3_600_000).optional(),
    /** How many matching requests are affected at most. */
    count: z.number().int().min(1).max(100_000).optional(),
    /** latency only: the wait before the request is processed (default 1000). */
    latencyMs: z.number().int().min(0).max(MAX_HOLD_MS).optional(),
    /** timeout only: how long a request is held before its connection is dropped (default and maximum 120000). */
    holdMs: z.number().int().min(1).max(MAX_HOLD_MS).optional(),
    /** Only this install's requests (default: every install's). */
    installId: z.number().int().positive().optional(),
    /**
     * rate-limited only: send RateLimit-ResetsIn (seconds until the fault ends), leave it out (default send), or send
     * this number of seconds as it is, however implausible (a service that says "come back in 3,000 years").
     */
    resetsIn: z.union([z.enum(["send", "omit"]), z.number().int().min(0).max(1e12)]).optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    if (f.forMs === undefined && f.count === undefined) {
      ctx.addIssue({ code: "custom", message: "give forMs, count or both: a fault must end", path: ["forMs"] });
    }
    if (f.latencyMs !== undefined && f.mode !== "latency") ctx.addIssue({ code: "custom", message: "latencyMs applies to mode latency only", path: ["latencyMs"] });
    if (f.holdMs !== undefined && f.mode !== "timeout") ctx.addIssue({ code: "custom", message: "holdMs applies to mode timeout only", path: ["holdMs"] });
    if (f.resetsIn !== undefined && f.mode !== "rate-limited") ctx.addIssue({ code: "custom", message: "resetsIn applies to mode rate-limited only", path: ["resetsIn"] });
    // RateLimit-ResetsIn says when the fault ends; with a count alone that is not known, so the caller must say "omit".
    if (f.mode === "rate-limited" && (f.resetsIn === undefined || f.resetsIn === "send") && f.forMs === undefined) {
      ctx.addIssue({ code: "custom", message: 'rate-limited with count alone has no end time for RateLimit-ResetsIn: give forMs, or resetsIn "omit"', path: ["resetsIn"] });
    }
  });
export type ApiFaultRequest = z.infer<typeof apiFaultRequestSchema>;

/** GET /_sandbox/api-faults: one armed fault, as it stands. */
export interface ArmedApiFault {
  id: number;
  path: string;
  mode: ApiFaultMode;
  installId: number | null;
  /** Requests it may still affect (null: no count, it lasts until expiresAt). */
  remaining: number | null;
  /** When it ends (wall clock; null: when its count is used up). */
  expiresAt: string | null;
  latencyMs: number | null;
  holdMs: number | null;
  resetsIn: "send" | "omit" | number | null;
  /** Requests it has affected so far. */
  affected: number;
}

/** What a fault does to the one request it was taken for. */
export type AppliedApiFault =
  | { mode: "rate-limited"; id: number; resetsInSeconds: number | null }
  | { mode: "error500" | "error503"; id: number }
  | { mode: "latency"; id: number; latencyMs: number }
  | { mode: "timeout"; id: number; holdMs: number };

interface Armed {
  view: ArmedApiFault;
  /** Wall-clock end, ms (null: count only). */
  expiresAtMs: number | null;
}

/** Why a held request stopped waiting. */
export type HoldOutcome = "elapsed" | "client_closed" | "shutdown";

/** Whether `apiPath` (under /api/v1, no query) is `faultPath` or below it. */
export function faultPathMatches(faultPath: string, apiPath: string): boolean {
  const path = apiPath.length > 1 ? apiPath.replace(/\/+$/, "") : apiPath;
  return faultPath === "/" || path === faultPath || path.startsWith(`${faultPath}/`);
}

export class ApiFaults {
  private armed: Armed[] = [];
  private nextId = 1;
  /** Requests waiting in a `latency` or `timeout` fault: released at once when the sandbox closes. */
  private readonly held = new Set<() => void>();

  /**
   * Faults run on the wall clock, not the sandbox clock: they are devices for a client's real-time behaviour (its
   * backoff sleeps in real time), and moving the sandbox clock to expire a rate window must not end them.
   */
  constructor(private readonly wallNowMs: () => number = Date.now) {}

  arm(request: ApiFaultRequest): ArmedApiFault {
    const now = this.wallNowMs();
    const expiresAtMs = request.forMs === undefined ? null : now + request.forMs;
    const armed: Armed = {
      expiresAtMs,
      view: {
        id: this.nextId++,
        path: request.path,
        mode: request.mode,
        installId: request.installId ?? null,
        remaining: request.count ?? null,
        expiresAt: expiresAtMs === null ? null : new Date(expiresAtMs).toISOString(),
        latencyMs: request.mode === "latency" ? (request.latencyMs ?? DEFAULT_LATENCY_MS) : null,
        holdMs: request.mode === "timeout" ? (request.holdMs ?? MAX_HOLD_MS) : null,
        resetsIn: request.mode === "rate-limited" ? (request.resetsIn ?? "send") : null,
        affected: 0,
      },
    };
    this.armed.push(armed);
    return { ...armed.view };
  }

  /** The faults still armed, in the order they were armed (expired ones are dropped first). */
  list(): ArmedApiFault[] {
    this.dropExpired(this.wallNowMs());
    return this.armed.map((a) => ({ ...a.view }));
  }

  /** Disarms one fault; returns whether it was armed. */
  remove(id: number): boolean {
    const before = this.armed.length;
    this.armed = this.armed.filter((a) => a.view.id !== id);
    return this.armed.length < before;
  }

  clear(): void {
    this.armed = [];
  }

  /**
   * The fault for this request, if one matches: the first armed (oldest) whose path and install match. Taking it uses
   * one of its `count`; a fault whose count is used up or whose time is over is disarmed.
   */
  take(apiPath: string, installId: number): AppliedApiFault | null {
    const now = this.wallNowMs();
    this.dropExpired(now);
    const armed = this.armed.find((a) => faultPathMatches(a.view.path, apiPath) && (a.view.installId === null || a.view.installId === installId));
    if (!armed) return null;
    const { view } = armed;
    view.affected += 1;
    if (view.remaining !== null) {
      view.remaining -= 1;
      if (view.remaining <= 0) this.remove(view.id);
    }
    switch (view.mode) {
      case "rate-limited":
        return {
          mode: view.mode,
          id: view.id,
          // Seconds until the fault ends, rounded up, as a real limiter rounds its own window's end; at least 1 so that
          // a client that waits as told never comes back while the fault still lasts.
          resetsInSeconds:
            typeof view.resetsIn === "number"
              ? view.resetsIn
              : view.resetsIn === "send" && armed.expiresAtMs !== null
                ? Math.max(1, Math.ceil((armed.expiresAtMs - now) / 1000))
                : null,
        };
      case "latency":
        return { mode: view.mode, id: view.id, latencyMs: view.latencyMs ?? DEFAULT_LATENCY_MS };
      case "timeout":
        return { mode: view.mode, id: view.id, holdMs: view.holdMs ?? MAX_HOLD_MS };
      default:
        return { mode: view.mode, id: view.id };
    }
  }

  /**
   * Waits `ms`, or less when the client closes the connection (`signal`) or the sandbox closes (releaseAll). The timer
   * is cleared and the listeners removed whichever comes first, and the timer is unref'd, so a held request never keeps
   * the process alive.
   */
  hold(ms: number, signal: AbortSignal): Promise<HoldOutcome> {
    if (signal.aborted) return Promise.resolve("client_closed");
    return new Promise((resolve) => {
      const finish = (outcome: HoldOutcome): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.held.delete(onShutdown);
        resolve(outcome);
      };
      const onAbort = (): void => finish("client_closed");
      const onShutdown = (): void => finish("shutdown");
      const timer = setTimeout(() => finish("elapsed"), ms);
      timer.unref();
      signal.addEventListener("abort", onAbort, { once: true });
      this.held.add(onShutdown);
    });
  }

  /** Requests being held right now. */
  get heldCount(): number {
    return this.held.size;
  }

  /** Ends every hold at once (the sandbox is closing): their connections are then dropped. */
  releaseAll(): void {
    for (const release of [...this.held]) release();
  }

  private dropExpired(now: number): void {
    this.armed = this.armed.filter((a) => a.expiresAtMs === null || a.expiresAtMs > now);
  }
}
