// `npm run bench -- ingest`: webhook ingest beside two baselines, then a burst.
import path from "node:path";
import { performance } from "node:perf_hooks";
import { type BenchContext, summary } from "./lib";
import { startProcess, stopProcess, waitForHttp } from "../lib/processes";
import { computeWebhookSignature } from "../../lib/webhooks/signature";

/**
 * The ingest section's baseline (c): a bare node:http + pg server doing the same durable writes in
 * one statement (scripts/bench/bare-ingest-server.ts), in its own process like the app's server.
 */
async function startBareIngestServer(env: Record<string, string>, offset: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = 3300 + offset;
  const managed = startProcess("bare-ingest", process.execPath, ["--import", path.resolve("node_modules/tsx/dist/esm/index.mjs"), "scripts/bench/bare-ingest-server.ts"], {
    env: { ...process.env, ...env, BARE_PORT: String(port), BARE_POOL_SIZE: env.WEBHOOK_DATABASE_POOL_SIZE ?? "4" },
    quiet: true,
  });
  const url = `http://localhost:${port}/api/webhooks`;
  await waitForHttp(url, 20_000, managed);
  return { url, stop: () => stopProcess(managed) };
}

/** `total` distinct signed install.created deliveries for operators nobody has installed yet. */
function freshDeliveries(secret: string, total: number) {
  // Distinct install_ids within PostgreSQL's integer range (docs/spec-gaps.md A22).
  const base = 1_000_000 + Math.floor(Math.random() * 100_000) * 10_000;
  return Array.from({ length: total }, (_, i) => {
    const body = JSON.stringify({
      id: `whd_bench_${base + i}`,
      type: "install.created",
      delivered_at: Math.floor(Date.now() / 1000),
      data: { install_id: base + i + 1, operator_id: base + i + 1, slug: `bench-${i}` },
    });
    return { body, signature: computeWebhookSignature(new TextEncoder().encode(body), secret) };
  });
}

type IngestRun = { perSecond: number; latencies: number[]; statuses: Record<number, number> };

/** Sends the deliveries, `concurrency` at a time (all at once for a burst); counts every answer. */
async function ingest(url: string, deliveries: { body: string; signature: string }[], concurrency: number): Promise<IngestRun> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, deliveries.length) }, async () => {
      while (next < deliveries.length) {
        const { body, signature } = deliveries[next++]!;
        const t0 = performance.now();
        let status = 0; // 0: no HTTP answer at all (a transport error)
        try {
          const response = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", "X-Volt-Signature": signature }, body });
          await response.arrayBuffer();
          status = response.status;
        } catch {
          // counted below as status 0
        }
        latencies.push(performance.now() - t0);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { perSecond: deliveries.length / ((performance.now() - started) / 1000), latencies, statuses };
}

const non2xx = (run: IngestRun) => Object.entries(run.statuses).reduce((n, [status, count]) => (Number(status) >= 200 && Number(status) < 300 ? n : n + count), 0);

export async function webhookIngest({ stack, offset }: BenchContext) {
  const secret = stack.env.WEBHOOK_SECRET!;
  // Webhook ingest, each server in its own process and the load generated here: (a) the app's
  // POST /api/webhooks (verify, parse, dedupe, record the delivery, the install and its event);
  // (b) an empty route handler in the same build (the framework's own cost); (c) a bare node:http
  // + pg server doing the same durable writes in one statement (the floor). Then a burst.
  // Targets (issue 9): app/(b) >= 0.5, app/(c) >= 0.3; burst: 0 non-2xx, all answered within 10 s.
  const PER_RUN = 1000;
  console.log(`\n== webhook ingest (${PER_RUN} distinct install.created per run, after 100 to warm up) ==`);
  const bare = await startBareIngestServer(stack.env as Record<string, string>, offset);
  const servers = [
    ["(a) app: POST /api/webhooks", `${stack.env.APP_URL}/api/webhooks`],
    ["(b) empty Next.js route, same build", `${stack.env.APP_URL}/api/bench/empty`],
    ["(c) bare node:http + pg, one statement", bare.url],
  ] as const;
  const rates: Record<string, Record<number, number>> = {};
  for (const concurrency of [8, 64]) {
    for (const [name, url] of servers) {
      await ingest(url, freshDeliveries(secret, 100), 8);
      const run = await ingest(url, freshDeliveries(secret, PER_RUN), concurrency);
      (rates[name] ??= {})[concurrency] = run.perSecond;
      summary(`c=${concurrency} ${name}`, run.latencies);
      console.log(`${"".padEnd(44)} ${Math.round(run.perSecond)} deliveries/s  non-2xx=${non2xx(run)}`);
    }
  }
  await bare.stop();
  const [app, empty, floor] = servers.map(([name]) => rates[name]!);
  for (const concurrency of [8, 64]) {
    console.log(
      `${`ratios at c=${concurrency}`.padEnd(44)} app/(b)=${(app![concurrency]! / empty![concurrency]!).toFixed(2)} (target >= 0.5)` +
        `  app/(c)=${(app![concurrency]! / floor![concurrency]!).toFixed(2)} (target >= 0.3)`,
    );
  }

  // The burst: 2,000 deliveries sent at once, as a replay of many would arrive (contract §6: the
  // service waits 10 s and never retries, so every non-2xx here is a lost delivery).
  console.log("\n== webhook burst (2,000 distinct deliveries sent at once to POST /api/webhooks) ==");
  const burst = await ingest(`${stack.env.APP_URL}/api/webhooks`, freshDeliveries(secret, 2000), 2000);
  const slowest = Math.max(...burst.latencies);
  summary("burst", burst.latencies);
  console.log(
    `${"".padEnd(44)} non-2xx=${non2xx(burst)} (503 unavailable=${burst.statuses[503] ?? 0})  slowest answer=${(slowest / 1000).toFixed(2)} s` +
      `  ${non2xx(burst) === 0 && slowest < 10_000 ? "(target met: 0 non-2xx, all within 10 s)" : "(target missed: 0 non-2xx, all within 10 s)"}`,
  );
}
