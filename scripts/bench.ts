// npm run bench: performance figures, printed (never asserted: tests assert behaviour, this measures).
//
// Starts the same fresh stack as `npm test` (embedded PostgreSQL, the sandbox, a production build
// of the app) on its own ports, then runs each benchmark and prints a table per benchmark.
// It runs with the `react-server` condition so it can import server-only modules from lib/.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { generateLocalEnv } from "./lib/local-env";
import { stopAll } from "./lib/processes";
import { startStack } from "./lib/stack";
import { openToken, sealToken } from "../lib/oauth/token-crypto";
import { computeWebhookSignature, verifyWebhookSignature } from "../lib/webhooks/signature";

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(name: string, samplesMs: number[]) {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const total = samplesMs.reduce((a, b) => a + b, 0);
  console.log(
    `${name.padEnd(44)} n=${String(samplesMs.length).padStart(5)}  p50=${percentile(sorted, 50).toFixed(2).padStart(8)} ms` +
      `  p99=${percentile(sorted, 99).toFixed(2).padStart(8)} ms  mean=${(total / samplesMs.length).toFixed(2).padStart(8)} ms`,
  );
}

function opsPerSecond(name: string, iterations: number, fn: () => void) {
  for (let i = 0; i < Math.min(1000, iterations); i++) fn(); // warm up
  const started = performance.now();
  for (let i = 0; i < iterations; i++) fn();
  const seconds = (performance.now() - started) / 1000;
  console.log(`${name.padEnd(44)} ${Math.round(iterations / seconds).toLocaleString("en-US").padStart(12)} ops/s`);
}

// --- In-process: the cost of the security primitives on the hot paths -------------------------
console.log("\n== primitives (in process) ==");
const keys = [{ id: "k1", key: randomBytes(32) }];
const token = `volt_at_${randomBytes(32).toString("base64url")}`;
const sealed = sealToken(token, "install-row-id", keys);
opsPerSecond("token seal (AES-256-GCM)", 50_000, () => sealToken(token, "install-row-id", keys));
opsPerSecond("token open (AES-256-GCM)", 50_000, () => openToken(sealed, "install-row-id", keys));
const body = new TextEncoder().encode(JSON.stringify({ id: "whd_1", type: "install.created", delivered_at: 1, data: { install_id: 1 } }));
const header = computeWebhookSignature(body, "bench-webhook-secret-0123");
opsPerSecond("webhook signature verify (HMAC-SHA256)", 100_000, () => verifyWebhookSignature(body, header, ["bench-webhook-secret-0123"]));

// --- Against the running stack ---------------------------------------------------------------
console.log("\n== against the stack (next start + sandbox + PostgreSQL) ==");
const stack = await startStack({
  env: generateLocalEnv({ app: 3200, sandbox: 4210 }),
  dataDir: ".data/bench",
  databasePort: 54340,
  fresh: true,
  appMode: "start",
  quiet: true,
});
const sandboxUrl = stack.env.SANDBOX_URL!;

async function approve(operatorId: number): Promise<string> {
  const post = (url: string, fields: Record<string, string>) =>
    fetch(url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString(), redirect: "manual" });
  const at = (r: Response) => new URL(r.headers.get("location")!, sandboxUrl).toString();
  const authorize = at(await post(`${sandboxUrl}/portal/operators/${operatorId}/connect`, {}));
  const consent = at(await fetch(authorize, { redirect: "manual" }));
  const challenge = /name="consent_challenge" value="([^"]+)"/.exec(await (await fetch(consent)).text())![1]!;
  return at(await post(`${sandboxUrl}/idp/consent`, { consent_challenge: challenge, decision: "approve" }));
}

try {
  // The redirect_uri: redeem the code, ask /consumers/me, store the install and its tokens.
  const callbackMs: number[] = [];
  let cookie = "";
  for (let i = 0; i < 30; i++) {
    const callback = await approve(1001);
    const started = performance.now();
    const response = await fetch(callback, { redirect: "manual" });
    callbackMs.push(performance.now() - started);
    if (response.status !== 303 || !response.headers.get("location")?.endsWith("/dashboard")) throw new Error(`callback failed: ${response.status}`);
    cookie = response.headers.get("set-cookie")!.split(";")[0]!;
  }
  summary("GET /oauth/callback (code → tokens → stored)", callbackMs.slice(3)); // first runs warm the server

  // The dashboard: session → install → token → GET /charge-points → render.
  const dashboardMs: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    const response = await fetch(`${stack.env.APP_URL}/dashboard?perPage=25`, { headers: { cookie } });
    await response.text();
    dashboardMs.push(performance.now() - started);
  }
  summary("GET /dashboard (live API read, 25 rows)", dashboardMs.slice(5));
} finally {
  await stopAll();
  await stack.stop();
}
