// `npm run conformance` against this template, on the lane's stack: the app as built and deployed, judged only by what
// the service (the sandbox) saw and what the app answered (conformance/, docs/conformance.md). The template must never
// ship failing its own conformance. The one aid from inside is the app's clock for keep-alive: the app decides what is
// due by its own time, which a black-box run cannot move, so this test moves the app's stored expiries instead (what
// `npm run conformance -- --app-clock-command` does with scripts/conformance-app-clock.ts).
import { afterAll, beforeAll, expect, it } from "vitest";
import { runConformance } from "../../conformance/run";
import { table } from "../../conformance/report";
import { closeSql, resetWorld, sql, stack } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

beforeAll(resetWorld);
// The invalid_client check leaves the app's token requests paused, as the contract asks: the next file starts afresh.
afterAll(async () => {
  await resetWorld();
  await closeSql();
});

it("the template keeps every obligation the conformance run checks", { timeout: scaled(240_000) }, async () => {
  const cron = (job: string) => ({ url: `${stack.appUrl}/api/cron/${job}`, secret: process.env.CRON_SECRET });
  const report = await runConformance(
    {
      sandboxUrl: stack.sandboxUrl,
      pageUrl: `${stack.appUrl}/dashboard/charge-points`,
      keepAlive: cron("keep-alive"),
      jobs: [cron("sync")],
      advanceAppClock: async (seconds) => {
        await sql(
          "UPDATE token_grants SET refresh_token_expires_at = refresh_token_expires_at - make_interval(secs => $1), access_token_expires_at = access_token_expires_at - make_interval(secs => $1)",
          [seconds],
        );
      },
    },
    { progress: (line) => console.log(line) },
  );
  console.log(table(report));
  expect(report.results.filter((r) => r.verdict !== "PASS").map((r) => `${r.verdict} ${r.id}: ${r.evidence.join(" · ")}`)).toEqual([]);
});
