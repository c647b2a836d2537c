// `npm run bench -- stampede`: one install's expired access token under N concurrent calls from two processes.
import { type BenchContext, summary } from "./lib";
import { resultOf, runAppWorker } from "../../tests/helpers/app-process";
import { closeSql, control, expireAccessToken, sql } from "../../tests/helpers/stack";

/** Refresh calls the sandbox counted for the install, and chains it revoked for a reused token. */
async function refreshCount(installId: number): Promise<{ refreshes: number; revocations: number }> {
  const stats = await control<{ calls: { refresh_token: number }; chain_revocations: number }>("GET", `/installs/${installId}/token-stats`);
  return { refreshes: stats.calls.refresh_token, revocations: stats.chain_revocations };
}

export async function stampede({ stack }: BenchContext) {
  // The refresh stampede: N concurrent API calls from two processes for one install whose access
  // token has just expired. Exactly one refresh should reach the identity provider.
  console.log("\n== refresh stampede (2 processes, access token expired at the app and the service) ==");
  const [install] = await sql<{ id: string; install_id: number }>("SELECT id, install_id FROM installs WHERE status = 'ACTIVE' LIMIT 1");
  if (!install) throw new Error("bench: no active install");
  const workerEnv = { ...(stack.env as Record<string, string>), LOG_LEVEL: "warn" };
  for (const perProcess of [50, 100, 250]) {
    // Baseline: the same calls with a valid token, so the refresh's own cost can be read off.
    const baseline = await Promise.all([0, 1].map(() => runAppWorker(["call", install.id, String(perProcess)], workerEnv)));
    summary(`N=${perProcess * 2}: baseline, no refresh`, baseline.flatMap((r) => resultOf<{ latencies: number[] }>(r).latencies));

    await expireAccessToken(install.id, true);
    const before = await refreshCount(install.install_id);
    const runs = await Promise.all([0, 1].map(() => runAppWorker(["call", install.id, String(perProcess)], workerEnv)));
    const results = runs.map((r) => resultOf<{ ok: number; errors: Record<string, number>; latencies: number[] }>(r));
    const failed = results.reduce((n, r) => n + Object.values(r.errors).reduce((a, b) => a + b, 0), 0);
    const after = await refreshCount(install.install_id);
    summary(`N=${perProcess * 2}: at expiry`, results.flatMap((r) => r.latencies));
    console.log(
      `${"".padEnd(44)} refresh calls=${after.refreshes - before.refreshes}  chain revocations=${after.revocations - before.revocations}  failed calls=${failed}`,
    );
  }
  await closeSql();
}
