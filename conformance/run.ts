// The conformance run: each check in turn against the app and the sandbox, one progress line per check, the results
// for the report writers (report.ts). A check that throws is a FAIL with the error as evidence: the run goes on.
import { CHECKS, type Check } from "./checks";
import { RunContext } from "./context";
import type { CheckResult, ConformanceTarget } from "./types";

export interface RunOptions {
  /** One line per check as it ends (default: none). */
  progress?: (line: string) => void;
  /** The checks to run (default: all of them); for tests of one check. */
  checks?: Check[];
}

export interface RunReport {
  startedAt: string;
  seconds: number;
  results: CheckResult[];
  /** true when no check failed and none was left out without being asked to. */
  passed: boolean;
}

const matches = (check: Check, names: string[] | undefined) => names?.some((name) => name === check.id || name === check.group) ?? false;

export async function runConformance(target: ConformanceTarget, options: RunOptions = {}): Promise<RunReport> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const ctx = new RunContext(target);
  await ctx.start();
  const checks = options.checks ?? CHECKS;
  const results: CheckResult[] = [];
  for (const [index, check] of checks.entries()) {
    const checkStarted = performance.now();
    const base = { id: check.id, group: check.group, obligation: check.obligation, section: check.section };
    let result: CheckResult;
    if (matches(check, target.skip) || (target.only && !matches(check, target.only))) {
      result = { ...base, verdict: "NOT RUN", evidence: ["left out by request (--skip / --only)"], seconds: 0 };
    } else {
      try {
        result = { ...base, ...(await check.run(ctx)), seconds: 0 };
      } catch (error) {
        result = { ...base, verdict: "FAIL", evidence: [`the check could not complete: ${error instanceof Error ? error.message : String(error)}`], seconds: 0 };
      }
      try {
        await ctx.cleanUp();
      } catch (error) {
        result.evidence.push(`cleaning up after the check failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    result.seconds = Math.round((performance.now() - checkStarted) / 100) / 10;
    results.push(result);
    options.progress?.(`[conformance] ${String(index + 1).padStart(2)}/${checks.length} ${result.verdict.padEnd(7)} ${check.id} (${result.seconds} s)${result.verdict === "PASS" ? "" : `: ${result.evidence[0] ?? ""}`}`);
  }
  const leftOutOnRequest = (r: CheckResult) => matches(r as unknown as Check, target.skip) || (target.only !== undefined && !matches(r as unknown as Check, target.only));
  return {
    startedAt,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    results,
    passed: results.every((r) => r.verdict === "PASS" || (r.verdict === "NOT RUN" && leftOutOnRequest(r))),
  };
}
