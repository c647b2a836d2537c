// Partner API request counters per install (GET/DELETE /_sandbox/installs/:id/api-requests; README decision 38), so
// tests count instead of timing: how many requests an install sent, how they were answered, how many the limiter
// refused in each of its windows, and the most that arrived within any span of the install's window length.
//
// `peakInAnyWindow` is what proves a client kept within its budget against ANY server, not just this fixed-window one:
// a client can have zero 429s here (its bursts fell on either side of a window edge) and still send twice its budget
// within one minute, which a sliding-window or token-bucket service would refuse. It is computed from each request's
// arrival time on the sandbox clock, kept in a capped log per install. In memory only.

/** Arrival times kept per install; `peakInAnyWindow` covers the newest this many (`arrivalsKept` says how many). */
export const ARRIVAL_LOG_CAP = 100_000;
/** Limiter windows kept per install (the newest). */
export const WINDOW_LOG_CAP = 1000;

/** An answer's status, or "no_answer" for a request whose connection was dropped (timeout fault, client gone). */
export type AnswerStatus = number | "no_answer";

interface WindowCount {
  startMs: number;
  /** Requests the limiter counted in this window, refused ones included. */
  count: number;
  /** Of those, how many it refused (429). */
  limited: number;
}

interface InstallTraffic {
  total: number;
  byStatus: Map<string, number>;
  faulted: number;
  windows: WindowCount[];
  /** Arrival times (sandbox clock, ms), oldest first; trimmed to ARRIVAL_LOG_CAP in batches. */
  arrivals: number[];
}

export interface ApiRequestCounts {
  installId: number;
  /** Requests whose access token resolved to this install (whatever happened next). */
  total: number;
  /** How they were answered: HTTP status → count, and "no_answer" for dropped connections. */
  byStatus: Record<string, number>;
  /** Requests an armed API fault affected (answered, delayed or swallowed). */
  faulted: number;
  /** The limiter's windows, oldest first: when each started, requests counted in it, and how many were refused. */
  windows: { startedAt: string; count: number; limited: number }[];
  /** The most requests that arrived within any span of `peakWindowSeconds` (sandbox clock). */
  peakInAnyWindow: number;
  peakWindowSeconds: number;
  /** Arrival times the peak was computed over (= total unless more than ARRIVAL_LOG_CAP arrived). */
  arrivalsKept: number;
}

/**
 * The most values of `sortedMs` within any half-open span [t, t + spanMs): two pointers over the sorted arrivals, the
 * span starting at each arrival in turn (a busiest span can always be slid to start at an arrival).
 */
export function peakWithinSpan(sortedMs: readonly number[], spanMs: number): number {
  let peak = 0;
  let end = 0;
  for (let start = 0; start < sortedMs.length; start += 1) {
    const from = sortedMs[start]!;
    while (end < sortedMs.length && sortedMs[end]! < from + spanMs) end += 1;
    peak = Math.max(peak, end - start);
  }
  return peak;
}

export class ApiRequestCounters {
  private readonly installs = new Map<number, InstallTraffic>();

  private of(installId: number): InstallTraffic {
    let traffic = this.installs.get(installId);
    if (!traffic) {
      traffic = { total: 0, byStatus: new Map(), faulted: 0, windows: [], arrivals: [] };
      this.installs.set(installId, traffic);
    }
    return traffic;
  }

  /** A request whose token resolved to the install arrived. */
  arrived(installId: number, nowMs: number): void {
    const traffic = this.of(installId);
    traffic.total += 1;
    traffic.arrivals.push(nowMs);
    // Trim in batches (at twice the cap) so that a busy install does not shift a 100,000-entry array on every request.
    if (traffic.arrivals.length >= 2 * ARRIVAL_LOG_CAP) traffic.arrivals.splice(0, traffic.arrivals.length - ARRIVAL_LOG_CAP);
  }

  faulted(installId: number): void {
    this.of(installId).faulted += 1;
  }

  /** The limiter counted a request in the window that started at `windowStartMs`, and refused it or not. */
  counted(installId: number, windowStartMs: number, limited: boolean): void {
    const { windows } = this.of(installId);
    let current = windows.at(-1);
    if (!current || current.startMs !== windowStartMs) {
      current = { startMs: windowStartMs, count: 0, limited: 0 };
      windows.push(current);
      if (windows.length > WINDOW_LOG_CAP) windows.splice(0, windows.length - WINDOW_LOG_CAP);
    }
    current.count += 1;
    if (limited) current.limited += 1;
  }

  answered(installId: number, status: AnswerStatus): void {
    const { byStatus } = this.of(installId);
    const key = String(status);
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
  }

  view(installId: number, peakWindowSeconds: number): ApiRequestCounts {
    const traffic = this.installs.get(installId);
    const arrivals = (traffic?.arrivals ?? []).slice(-ARRIVAL_LOG_CAP);
    // The sandbox clock can be moved back (a negative advance), so sort rather than trust arrival order.
    arrivals.sort((a, b) => a - b);
    return {
      installId,
      total: traffic?.total ?? 0,
      byStatus: Object.fromEntries([...(traffic?.byStatus ?? new Map<string, number>())].sort(([a], [b]) => a.localeCompare(b))),
      faulted: traffic?.faulted ?? 0,
      windows: (traffic?.windows ?? []).map((w) => ({ startedAt: new Date(w.startMs).toISOString(), count: w.count, limited: w.limited })),
      peakInAnyWindow: peakWithinSpan(arrivals, peakWindowSeconds * 1000),
      peakWindowSeconds,
      arrivalsKept: arrivals.length,
    };
  }

  /** DELETE /_sandbox/installs/:id/api-requests: this install starts counting from zero (its budget is untouched). */
  clear(installId: number): void {
    this.installs.delete(installId);
  }

  /** POST /_sandbox/reset. */
  reset(): void {
    this.installs.clear();
  }
}
