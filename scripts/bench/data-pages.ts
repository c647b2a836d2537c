// `npm run bench -- data-pages`: the charge points and sessions pages and the CSV export over the large operator's local copy.
import { performance } from "node:perf_hooks";
import { type BenchContext, appCpuPerRequest, summary } from "./lib";
import { LARGE_OPERATOR_ID, closeSql, sql } from "../../tests/helpers/stack";
import { SESSIONS_PAGE } from "../../tests/helpers/dashboard";

export async function dataPages({ stack, syncedLargeOperator }: BenchContext) {
  // The charge points and sessions pages over the large operator's local copy (issue 13,
  // lib/dashboard/charge-points.ts and sessions.ts): after one sync of its 20,000 charges, the
  // sessions list's first and a deep page (offset pagination), one charge point's sessions, a date
  // range, a charge point search, and the whole CSV export (keyset batches of 1,000).
  const { install, synced } = await syncedLargeOperator();
  const [copy] = await sql<{ charges: number; charge_points: number; busiest: string }>(
    `SELECT (SELECT count(*)::int FROM synced_charges WHERE install_row_id = $1) AS charges,
            (SELECT count(*)::int FROM synced_charge_points WHERE install_row_id = $1) AS charge_points,
            (SELECT charge_point_id FROM synced_charges WHERE install_row_id = $1 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1) AS busiest`,
    [install.installRowId],
  );
  console.log(`\n== data pages (operator ${LARGE_OPERATOR_ID}: ${copy!.charges.toLocaleString("en-US")} charges, ${copy!.charge_points} charge points in the copy; sync ${synced.outcome}) ==`);
  const timePage = async (name: string, pathAndQuery: string, count = 30) => {
    const samples: number[] = [];
    const get = async () => {
      const t0 = performance.now();
      const response = await fetch(`${stack.env.APP_URL}${pathAndQuery}`, { headers: { cookie: install.sessionCookie } });
      await response.text();
      if (response.status !== 200) throw new Error(`${pathAndQuery}: HTTP ${response.status}`);
      return performance.now() - t0;
    };
    for (let i = 0; i < 3; i++) await get(); // the first runs warm the server
    // Three blocks of count / 3 requests: the app's CPU per page of each, and the latency of all.
    await appCpuPerRequest(name, stack.appPid, count / 3, async () => {
      for (let i = 0; i < count / 3; i++) samples.push(await get());
    });
    summary(name, samples);
  };
  await timePage("GET /dashboard/charge-points?q=… (search)", "/dashboard/charge-points?q=hotel");
  // The Sessions section's pages, while the dashboard has one (a fork may remove it).
  const sessions = SESSIONS_PAGE;
  if (sessions) {
    const deepPage = Math.floor(copy!.charges / 100) - 1;
    await timePage(`GET ${sessions} (first 25)`, sessions);
    await timePage(`GET ${sessions} (page ${deepPage}, 100 a page)`, `${sessions}?perPage=100&page=${deepPage}`);
    await timePage(`GET ${sessions} (one charge point)`, `${sessions}?chargePoint=${copy!.busiest}`);
    await timePage(`GET ${sessions} (a 30-day range)`, `${sessions}?from=2025-02-01&to=2025-03-02`);
    const exportMs: number[] = [];
    let bytes = 0;
    let lines = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const response = await fetch(`${stack.env.APP_URL}${sessions}/export`, { headers: { cookie: install.sessionCookie } });
      const text = await response.text();
      exportMs.push(performance.now() - t0);
      bytes = text.length;
      lines = text.split("\r\n").length - 2; // minus the header and the empty string after the last CRLF
    }
    summary(`GET ${sessions}/export (${lines.toLocaleString("en-US")} rows, ${(bytes / 1e6).toFixed(1)} MB)`, exportMs);
  }
  await closeSql();
}
