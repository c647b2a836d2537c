// `npm run bench -- sync`: the initial sync of the large operator alone, then of ten installs at once.
import { BUDGET_LIMIT, BUDGET_WINDOW_SECONDS, type BenchContext, SYNC_FIRST_OPERATOR, SYNC_INSTALLS } from "./lib";
import { resultOf, runAppWorker } from "../../tests/helpers/app-process";
import { LARGE_OPERATOR_ID, closeSql, control, installViaPortal } from "../../tests/helpers/stack";

/** Records per page for the sync section (BENCH_SYNC_PER_PAGE, default 100, the API's maximum). */
const SYNC_PER_PAGE = Number(process.env.BENCH_SYNC_PER_PAGE ?? 100);
if (!Number.isInteger(SYNC_PER_PAGE) || SYNC_PER_PAGE < 1 || SYNC_PER_PAGE > 100) {
  console.error("bench: BENCH_SYNC_PER_PAGE must be a whole number from 1 to 100");
  process.exit(2);
}

/**
 * Records per page for the sync section's ten installs at once (BENCH_SYNC_PARALLEL_PER_PAGE, default
 * 10): an ordinary operator's 2,000 charges are then 200 pages, so each install's sync spans more than
 * one budget window, as the large operator's does at 100 per page; at 100 per page it would fit in one.
 */
const SYNC_PARALLEL_PER_PAGE = Number(process.env.BENCH_SYNC_PARALLEL_PER_PAGE ?? 10);
if (!Number.isInteger(SYNC_PARALLEL_PER_PAGE) || SYNC_PARALLEL_PER_PAGE < 1 || SYNC_PARALLEL_PER_PAGE > 100) {
  console.error("bench: BENCH_SYNC_PARALLEL_PER_PAGE must be a whole number from 1 to 100");
  process.exit(2);
}

export async function sync({ stack }: BenchContext) {
  // The sync (issue 12, lib/sync/): the initial sync of the large operator's whole charge list alone,
  // then ten installs at once in one worker process, each install with the contract's default budget
  // (1,000 per 60 s, scaled to BENCH_BUDGET_WINDOW_SECONDS like the budget section). The sync is
  // background work: it may spend the steady rate of the budget, (1 - API_BUDGET_MARGIN) × the limit
  // per window (lib/partner-api/budget.ts), and never the pages' reserve. That steady rate is "the
  // background share" below; the busiest span of one window's length is the figure that matters
  // against any server (sandbox/api/counters.ts). Targets: busiest span close to the share and not
  // above it by more than background's part of the burst; 0 429s.
  const { env: appEnv } = await import("../../lib/env");
  const margin = appEnv().API_BUDGET_MARGIN;
  const share = (1 - margin) * BUDGET_LIMIT;
  const { operators } = await control<{ operators: { id: number; chargeCount: number; chargePointCount: number }[] }>("GET", "/operators");
  const chargesEach = operators.find((o) => o.id === SYNC_FIRST_OPERATOR + 1)?.chargeCount ?? 0;
  const chargesLarge = operators.find((o) => o.id === LARGE_OPERATOR_ID)?.chargeCount ?? 0;
  console.log(
    `\n== sync (initial sync: the large operator's ${chargesLarge.toLocaleString("en-US")} charges alone, ${SYNC_PER_PAGE} per page; then ${SYNC_INSTALLS} operators with` +
      ` ${chargesEach.toLocaleString("en-US")} each at once, ${SYNC_PARALLEL_PER_PAGE} per page) ==`,
  );
  console.log(
    `${"budget and share".padEnd(44)} limit ${BUDGET_LIMIT} per ${BUDGET_WINDOW_SECONDS} s per install (contract §8's 1,000 per 60 s, scaled to a ${BUDGET_WINDOW_SECONDS} s window` +
      ` so that a sync of seconds spans whole windows; BENCH_BUDGET_WINDOW_SECONDS=60 measures the contract's own); background share = (1 - API_BUDGET_MARGIN ${margin})` +
      ` × ${BUDGET_LIMIT} = ${share.toFixed(1)} per ${BUDGET_WINDOW_SECONDS} s (= ${Math.round((share * 60) / BUDGET_WINDOW_SECONDS)} per 60 s)`,
  );
  type Counts = { byStatus: Record<string, number>; windows: { count: number }[]; peakInAnyWindow: number };
  type SyncRun = { summaries: { outcome: string; resources: { resource: string; recordsUpserted: number; requests: number }[] }[]; installMs: number[]; wallMs: number };
  const budget = { limit: BUDGET_LIMIT, windowSeconds: BUDGET_WINDOW_SECONDS };
  const stackDefault = await control<{ rateLimit: { limit: number; windowSeconds: number } }>("GET", "/rate-limit");
  await control("PUT", "/rate-limit", budget);
  const installs: Awaited<ReturnType<typeof installViaPortal>>[] = [];
  // The first: the sandbox's large operator (sandbox/README.md decision 40); then ten ordinary ones.
  for (let i = 0; i <= SYNC_INSTALLS; i++) {
    const install = await installViaPortal(i === 0 ? LARGE_OPERATOR_ID : SYNC_FIRST_OPERATOR + i);
    await control("PUT", `/installs/${install.installId}/rate-limit`, budget);
    installs.push(install);
  }
  await control("PUT", "/rate-limit", stackDefault.rateLimit);

  const ofShare = (requests: number) => `${requests} = ${(requests / share).toFixed(3)} × the share`;
  /** Who set the pace: a sync held by its budget runs close to the share; well below it, the worker did. */
  const paceOf = (peakOverShare: number) =>
    peakOverShare >= 0.9 ? "paced by the budget (close to the share)" : "paced by the worker process (CPU, database), not by the budget: below the share";
  const syncAll = async (name: string, synced: typeof installs, perPage: number) => {
    for (const install of synced) await control("DELETE", `/installs/${install.installId}/api-requests`);
    // Let the window the install opened at the redirect_uri end first.
    await new Promise((resolve) => setTimeout(resolve, BUDGET_WINDOW_SECONDS * 1000));
    const ids = synced.map((install) => install.installRowId).join(",");
    const run = resultOf<SyncRun>(await runAppWorker(["sync-many", ids, String(perPage)], { ...(stack.env as Record<string, string>), LOG_LEVEL: "warn" }));
    const rows = await Promise.all(
      synced.map(async (install, n) => {
        const summary = run.summaries[n]!;
        const counts = await control<Counts>("GET", `/installs/${install.installId}/api-requests`);
        // Whole windows only: the last one was cut short by the end of the sync.
        const whole = counts.windows.slice(0, -1);
        return {
          records: summary.resources.reduce((m, r) => m + r.recordsUpserted, 0),
          requests: summary.resources.reduce((m, r) => m + r.requests, 0),
          seconds: run.installMs[n]! / 1000,
          completed: summary.outcome === "completed",
          tooMany: counts.byStatus["429"] ?? 0,
          peak: counts.peakInAnyWindow,
          wholeMean: whole.length > 0 ? whole.reduce((m, w) => m + w.count, 0) / whole.length : null,
          wholeCount: whole.length,
        };
      }),
    );
    const line = (label: string, row: (typeof rows)[number]) => {
      console.log(
        `${label.padEnd(44)} ${row.records.toLocaleString("en-US")} records in ${row.seconds.toFixed(1)} s = ${Math.round(row.records / row.seconds).toLocaleString("en-US")} records/s` +
          `  requests=${row.requests}  429s=${row.tooMany} (target 0)${row.completed ? "" : "  NOT COMPLETED"}`,
      );
      console.log(
        `${"".padEnd(44)} busiest ${BUDGET_WINDOW_SECONDS} s span: ${ofShare(row.peak)}` +
          (row.wholeMean === null
            ? `  (the sync took less than one ${BUDGET_WINDOW_SECONDS} s window: the span is all of it)`
            : `;  whole ${BUDGET_WINDOW_SECONDS} s windows (${row.wholeCount}): mean ${ofShare(Math.round(row.wholeMean))}`),
      );
    };
    if (rows.length === 1) {
      line(name, rows[0]!);
      console.log(`${"".padEnd(44)} ${paceOf(rows[0]!.peak / share)}`);
      return;
    }
    rows.forEach((row, n) => line(`${name}: install ${n + 1}`, row));
    const records = rows.reduce((m, r) => m + r.records, 0);
    const seconds = run.wallMs / 1000;
    const peaks = rows.map((r) => r.peak / share);
    console.log(
      `${`${name}: total`.padEnd(44)} ${records.toLocaleString("en-US")} records in ${seconds.toFixed(1)} s = ${Math.round(records / seconds).toLocaleString("en-US")} records/s` +
        `  requests=${rows.reduce((m, r) => m + r.requests, 0)}  429s=${rows.reduce((m, r) => m + r.tooMany, 0)} (target 0)  incomplete syncs=${rows.filter((r) => !r.completed).length}`,
    );
    console.log(
      `${"".padEnd(44)} busiest ${BUDGET_WINDOW_SECONDS} s span per install / the share: min ${Math.min(...peaks).toFixed(3)}  mean ${(peaks.reduce((a, b) => a + b, 0) / peaks.length).toFixed(3)}  max ${Math.max(...peaks).toFixed(3)}`,
    );
    console.log(`${"".padEnd(44)} ${paceOf(Math.min(...peaks))}`);
  };
  await syncAll(`the large operator (${LARGE_OPERATOR_ID}) alone`, installs.slice(0, 1), SYNC_PER_PAGE);
  await syncAll(`${SYNC_INSTALLS} at once`, installs.slice(1), SYNC_PARALLEL_PER_PAGE);
  await closeSql();
}
