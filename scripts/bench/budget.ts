// `npm run bench -- budget`: the per-install rate budget, walked flat out from two processes.
import { BUDGET_FIRST_OPERATOR, BUDGET_INSTALLS, BUDGET_LIMIT, BUDGET_WINDOW_SECONDS } from "./lib";
import { resultOf, runAppWorker } from "../../tests/helpers/app-process";
import { closeSql, control, installViaPortal } from "../../tests/helpers/stack";

export async function budget() {
  // The per-install rate budget (issue 11): walkers paging through a long charge list flat out,
  // as background work, from two processes. Each install's limit is set at the sandbox before it
  // is installed, so the app sizes its budget from the service's own answer. The sandbox counts
  // every request per install in its fixed windows. Targets: one install >= 0.95 of its limit per
  // window and 0 429s; ten installs at once, each >= 0.9 and 0 429s.
  const WALK_MS = Math.round(BUDGET_WINDOW_SECONDS * 3.5 * 1000);
  console.log(
    `\n== rate budget (limit ${BUDGET_LIMIT} per ${BUDGET_WINDOW_SECONDS} s per install = contract §8's 1,000 per 60 s;` +
      ` two processes walking /charges flat out for ${WALK_MS / 1000} s) ==`,
  );
  type Counters = { requests: number; rateLimited: number; budgetStatementMs: number; requestMs: number };
  type Counts = { byStatus: Record<string, number>; windows: { count: number }[]; peakInAnyWindow: number };
  const budget = { limit: BUDGET_LIMIT, windowSeconds: BUDGET_WINDOW_SECONDS };
  const stackDefault = await control<{ rateLimit: { limit: number; windowSeconds: number } }>("GET", "/rate-limit");
  await control("PUT", "/rate-limit", budget);
  const installs: Awaited<ReturnType<typeof installViaPortal>>[] = [];
  for (let i = 0; i <= BUDGET_INSTALLS; i++) {
    const install = await installViaPortal(BUDGET_FIRST_OPERATOR + i);
    // Its own limit, so that the stack's default can go back for the other sections.
    await control("PUT", `/installs/${install.installId}/rate-limit`, budget);
    installs.push(install);
  }
  await control("PUT", "/rate-limit", stackDefault.rateLimit);

  const walk = async (name: string, walked: typeof installs) => {
    const ids = walked.map((install) => install.installRowId).join(",");
    // Count the walk's own requests only (not the redirect_uri's), in windows the walk opens.
    for (const install of walked) await control("DELETE", `/installs/${install.installId}/api-requests`);
    // Let the window the install opened at the redirect_uri end first.
    await new Promise((resolve) => setTimeout(resolve, BUDGET_WINDOW_SECONDS * 1000));
    const results = (await Promise.all([0, 1].map(() => runAppWorker(["walk", ids, String(WALK_MS), "10"])))).map((run) =>
      resultOf<{ errors: Record<string, number>; counters: Record<string, Counters> }>(run),
    );
    const ratios: number[] = [];
    let tooMany = 0;
    let peak = 0;
    for (const install of walked) {
      const counts = await control<Counts>("GET", `/installs/${install.installId}/api-requests`);
      // Whole windows only: the last one was cut short by the end of the walk.
      const whole = counts.windows.slice(0, -1);
      if (process.env.BENCH_VERBOSE) console.log(`install ${install.installId}: windows ${counts.windows.map((w) => w.count).join(" ")}`);
      ratios.push(whole.reduce((n, w) => n + w.count, 0) / (whole.length * BUDGET_LIMIT));
      tooMany += counts.byStatus["429"] ?? 0;
      peak = Math.max(peak, counts.peakInAnyWindow);
    }
    const all = results.flatMap((r) => Object.values(r.counters));
    const requests = all.reduce((n, c) => n + c.requests, 0);
    const statementMs = all.reduce((n, c) => n + c.budgetStatementMs, 0) / requests;
    const requestMs = all.reduce((n, c) => n + c.requestMs, 0) / requests;
    const errors = results.reduce((n, r) => n + Object.values(r.errors).reduce((a, b) => a + b, 0), 0);
    console.log(
      `${name.padEnd(44)} requests per window / limit: ${walked.length === 1 ? ratios[0]!.toFixed(3) : `min ${Math.min(...ratios).toFixed(3)}  mean ${(ratios.reduce((a, b) => a + b, 0) / ratios.length).toFixed(3)}`}` +
        `  (target >= ${walked.length === 1 ? "0.95" : "0.9 each"})  429s=${tooMany} (target 0)  busiest ${BUDGET_WINDOW_SECONDS} s span=${peak}/${BUDGET_LIMIT}  failed walks=${errors}`,
    );
    console.log(
      `${"".padEnd(44)} per request: budget statement ${statementMs.toFixed(2)} ms (the extra round trip) beside the request itself ${requestMs.toFixed(2)} ms`,
    );
  };
  await walk("one install, two processes", installs.slice(0, 1));
  await walk(`${BUDGET_INSTALLS} installs at once, two processes`, installs.slice(1));
  await closeSql();
}
