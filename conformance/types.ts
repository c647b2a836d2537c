// The shapes a conformance run deals in: a check, its verdict and its evidence.
//
// A check judges one obligation of the service contract from outside the app: by what the service (played by the
// sandbox) saw, the token requests, API calls and webhook answers in its event log, and by the app's HTTP answers.
// It never reads the app's database or code, so it judges a fork, or an app in another language, the same way.

export type Verdict = "PASS" | "FAIL" | "NOT RUN";

export interface Outcome {
  verdict: Verdict;
  /** What was seen: counts and requests, one short sentence each (never a token, code or secret). */
  evidence: string[];
}

export interface CheckResult extends Outcome {
  id: string;
  group: string;
  obligation: string;
  /** The contract section(s) the obligation comes from, e.g. "§2, §5.2". */
  section: string;
  seconds: number;
}

/** How the run reaches the app's scheduled work, the way a deployment does (a cron route and its secret). */
export interface HttpTrigger {
  url: string;
  /** Sent as `Authorization: Bearer <secret>`. */
  secret?: string;
}

export interface ConformanceTarget {
  /** The sandbox playing the service; its control API is `${sandboxUrl}/_sandbox`. */
  sandboxUrl: string;
  /** A page of the app that makes a partner API call as the signed-in operator (absolute URL). */
  pageUrl: string;
  /** The app's keep-alive run (its cron route), for the idle-install check. */
  keepAlive?: HttpTrigger;
  /** Other scheduled work (a sync) to fire during the rate-budget burst and after an uninstall. */
  jobs?: HttpTrigger[];
  /**
   * Moves the app's own clock forward by `seconds`, as the run moves the service's. Only the keep-alive check needs it:
   * the app decides when a refresh token is due by its own clock, which a black-box run cannot move.
   */
  advanceAppClock?: (seconds: number) => Promise<void>;
  /** Operators to install with (default: every operator the sandbox lists without an active install, smallest first). */
  operatorIds?: number[];
  /** Check ids (or group names) to leave out; they are reported NOT RUN and do not fail the run. */
  skip?: string[];
  /** Check ids (or group names) to run alone (the others are reported NOT RUN, skipped). */
  only?: string[];
}

export const pass = (...evidence: string[]): Outcome => ({ verdict: "PASS", evidence });
export const fail = (...evidence: string[]): Outcome => ({ verdict: "FAIL", evidence });
export const notRun = (...evidence: string[]): Outcome => ({ verdict: "NOT RUN", evidence });

/** PASS when every condition holds; the evidence lists what was seen either way, failures first. */
export function judge(conditions: { ok: boolean; seen: string }[], context: string[] = []): Outcome {
  const failed = conditions.filter((c) => !c.ok);
  const passed = conditions.filter((c) => c.ok);
  return { verdict: failed.length ? "FAIL" : "PASS", evidence: [...failed.map((c) => c.seen), ...passed.map((c) => c.seen), ...context] };
}
