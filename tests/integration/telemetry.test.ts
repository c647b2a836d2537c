// OpenTelemetry (lib/telemetry/): the spans and metrics the app makes, and what they never carry.
//
// The SDK is started in this process exactly as the app and the worker start it
// (createTelemetrySdk: the fetch instrumentation, the redaction), with in-memory exporters in place
// of OTLP; then real code paths run against the stack's sandbox: an install through the
// redirect_uri, a token refresh, partner API calls (a 429 among them), a job, a sync and rejected
// webhooks. Every credential met on the way (the code, both access tokens, both refresh tokens, the
// client secret, the webhook secret) is collected and searched for in every exported value.
// A last test runs the built app with an OTLP endpoint and reads what it sends.
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { spawn } from "node:child_process";
import path from "node:path";
import { metrics, trace, ProxyTracerProvider } from "@opentelemetry/api";
import { AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { InMemorySpanExporter, type ReadableSpan, type TracerProvider } from "@opentelemetry/sdk-trace";
import type { NodeSDK } from "@opentelemetry/sdk-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/callback";
import { PRODUCT } from "../helpers/product";
import { approveInPortal, armApiFault, clearApiFaults, closeSql, expireAccessToken, resetWorld, sql, stack } from "../helpers/stack";

const spanExporter = new InMemorySpanExporter();
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const metricReader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
/** The product's metric and attribute prefix (lib/config/product.ts): `partner_app` as shipped. */
const PREFIX = PRODUCT.metricPrefix;
let sdk: NodeSDK;

/** Every credential seen during the tests: none of them may appear in anything exported. */
const secrets = new Set<string>();
function keep(...values: (string | null | undefined)[]) {
  for (const value of values) if (value) secrets.add(value);
}

beforeAll(async () => {
  // Nothing configured (this process has no OTEL_* variable): nothing is started, the API stays a no-op.
  const { startTelemetry } = await import("@/lib/telemetry/setup");
  const { createTelemetrySdk } = await import("@/lib/telemetry/sdk");
  const noop = await startTelemetry("app");
  expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate().constructor.name).toBe("NoopTracerProvider");
  expect(metrics.getMeterProvider().constructor.name).toBe("NoopMeterProvider");
  await noop.shutdown();

  sdk = createTelemetrySdk({ serviceName: "telemetry-test", spanExporter, metricReaders: [metricReader] });
  sdk.start();
  await resetWorld();
  keep(process.env.OAUTH_CLIENT_SECRET, process.env.WEBHOOK_SECRET, process.env.NEXTAUTH_SECRET);
});

afterAll(async () => {
  await sdk?.shutdown();
  await closeSql();
});

async function exportedSpans(): Promise<ReadableSpan[]> {
  await ((trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as TracerProvider).forceFlush();
  return spanExporter.getFinishedSpans();
}

async function exportedMetrics(): Promise<ResourceMetrics[]> {
  await metricReader.forceFlush();
  return metricExporter.getMetrics();
}

/** The points of one metric (the last export: cumulative), each with its attributes and value. */
async function points(name: string): Promise<{ attributes: Record<string, unknown>; value: unknown }[]> {
  const last = (await exportedMetrics()).at(-1);
  const metric = last?.scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []).map((point) => ({ attributes: point.attributes, value: point.value }));
}

function sum(list: { value: unknown }[]): number {
  return list.reduce((total, { value }) => total + (typeof value === "number" ? value : (value as { count: number }).count), 0);
}

/** Installs through the portal and the app's redirect_uri, from this process, keeping the code. */
async function install(operatorId: number): Promise<{ installRowId: string; installId: number }> {
  const callback = await approveInPortal(operatorId);
  keep(callback.searchParams.get("code"), callback.searchParams.get("state"));
  const response = await fetch(callback, { redirect: "manual" });
  expect(response.status).toBe(303);
  const [row] = await sql<{ id: string; install_id: number }>("SELECT id, install_id FROM installs WHERE operator_id = $1 ORDER BY created_at DESC LIMIT 1", [String(operatorId)]);
  return { installRowId: row!.id, installId: row!.install_id };
}

/** The install's tokens in clear, as the vault holds them now. */
async function keepTokens(installRowId: string) {
  const { db } = await import("@/lib/db/client");
  const { readGrantForUse, readRefreshToken } = await import("@/lib/oauth/token-vault");
  keep((await readGrantForUse(db(), installRowId))?.accessToken, (await readRefreshToken(db(), installRowId))?.refreshToken);
}

describe("spans and metrics reach the exporter", () => {
  let installRowId: string;

  it("a token refresh and a partner API call: one span each, with their attributes, and the refresh counted", async () => {
    ({ installRowId } = await install(1001));
    await keepTokens(installRowId);
    await expireAccessToken(installRowId, true);

    const { withAccessToken } = await import("@/lib/oauth/access");
    const { fetchConsumer } = await import("@/lib/partner-api/client");
    const consumer = await withAccessToken(installRowId, (token, call) => fetchConsumer(token, call));
    expect(consumer.operatorId).toBe("1001");
    await keepTokens(installRowId); // the rotated pair

    const spans = await exportedSpans();
    const refresh = spans.find((s) => s.name === "token refresh");
    expect(refresh?.attributes).toMatchObject({ [`${PREFIX}.install.row_id`]: installRowId, [`${PREFIX}.refresh.outcome`]: "refreshed" });
    expect(refresh?.events.map((e) => e.name)).toContain("refresh lock acquired");

    const call = spans.find((s) => s.name === "partner-api GET /consumers/me");
    expect(call?.attributes).toMatchObject({
      "http.request.method": "GET",
      "url.template": "/consumers/me",
      "http.response.status_code": 200,
      [`${PREFIX}.install.row_id`]: installRowId,
      [`${PREFIX}.api.priority`]: "interactive",
      [`${PREFIX}.api.attempts`]: 1,
    });
    // The HTTP request itself is the fetch instrumentation's span, a child of the call's span.
    const http = spans.find((s) => s.parentSpanContext?.spanId === call!.spanContext().spanId);
    expect(http?.attributes["url.full"]).toMatch(/\/api\/v1\/consumers\/me$/);
    // The token endpoint's request, under the refresh (its body is never recorded: no instrumentation reads bodies).
    expect(spans.some((s) => s.attributes["http.request.method"] === "POST" && s.parentSpanContext?.traceId === refresh!.spanContext().traceId)).toBe(true);

    expect(await points(`${PREFIX}.token.refreshes`)).toContainEqual({ attributes: { [`${PREFIX}.refresh.outcome`]: "refreshed" }, value: 1 });
    expect(sum(await points(`${PREFIX}.token.refresh_lock.wait_duration`))).toBeGreaterThanOrEqual(1);
    expect(sum(await points(`${PREFIX}.rate_budget.remaining_ratio`))).toBeGreaterThanOrEqual(1);
    expect(sum(await points(`${PREFIX}.rate_budget.wait_duration`))).toBeGreaterThanOrEqual(1);
    // The redirect_uri's own request, made from this process: its URL is kept without the code.
    const callback = spans.find((s) => String(s.attributes["url.full"] ?? "").includes("/oauth/callback"));
    expect(callback?.attributes["url.full"]).toMatch(/\/oauth\/callback$/);
    expect(callback?.attributes["url.query"]).toBeUndefined();
  });

  it("a 429: the call's span says so (attribute and event), and the rate_limited counter counts it", async () => {
    await armApiFault({ path: "/consumers/me", mode: "rate-limited", forMs: 300, count: 1 });
    try {
      const { withAccessToken } = await import("@/lib/oauth/access");
      const { fetchConsumer } = await import("@/lib/partner-api/client");
      await withAccessToken(installRowId, (token, call) => fetchConsumer(token, call));
    } finally {
      await clearApiFaults();
    }
    const limited = (await exportedSpans()).find((s) => s.name === "partner-api GET /consumers/me" && s.attributes[`${PREFIX}.api.rate_limited`] === 1);
    expect(limited?.attributes).toMatchObject({ [`${PREFIX}.api.attempts`]: 2, "http.response.status_code": 200 });
    expect(limited?.events.map((e) => e.name)).toContain("rate limited");
    expect(await points(`${PREFIX}.api.rate_limited`)).toContainEqual({ attributes: { "url.template": "/consumers/me" }, value: 1 });
  });

  it("a job: its span names the queue, the install and the attempt, and its duration is recorded", async () => {
    const { runJobNow } = await import("@/lib/jobs/engine");
    // The install's first sync, queued by the redirect_uri (lib/installs/connect.ts).
    const run = await runJobNow("sync", { maxJobs: 5, timeLimitMs: 20_000, concurrency: 2 });
    expect(run.worked).toBeGreaterThanOrEqual(1);
    const job = (await exportedSpans()).find((s) => s.name.startsWith("job ") && s.attributes[`${PREFIX}.install.row_id`] === installRowId);
    expect(job?.attributes).toMatchObject({ "messaging.system": "pg-boss", [`${PREFIX}.job.attempt`]: 1 });
    expect(job?.attributes["messaging.destination.name"]).toEqual(expect.any(String));
    expect(job?.attributes[`${PREFIX}.job.outcome`]).toEqual(expect.any(String));
    expect(sum(await points(`${PREFIX}.job.duration`))).toBeGreaterThanOrEqual(1);
  });

  it("syncs: runs are counted by resource and outcome, and a pass after an earlier one records the sync lag", async () => {
    const { syncInstall } = await import("@/lib/sync");
    await syncInstall(installRowId); // after the job's: a second pass
    const runs = await points(`${PREFIX}.sync.runs`);
    const completed = runs.find((p) => p.attributes[`${PREFIX}.sync.resource`] === "charge_points" && p.attributes[`${PREFIX}.sync.outcome`] === "completed");
    expect(completed?.value).toBeGreaterThanOrEqual(2);
    const lag = await points(`${PREFIX}.sync.lag`);
    expect(sum(lag.filter((p) => p.attributes[`${PREFIX}.sync.resource`] === "charge_points"))).toBeGreaterThanOrEqual(1);
  });

  it("rejected webhooks are counted by reason", async () => {
    const { receiveWebhook } = await import("@/lib/webhooks/receive");
    const { computeWebhookSignature } = await import("@/lib/webhooks/signature");
    const body = new TextEncoder().encode(JSON.stringify({ type: "install.created" }));
    expect((await receiveWebhook(body, "t=1,v1=forged")).status).toBe(401);
    expect((await receiveWebhook(body, "t=2,v1=forged")).status).toBe(401);
    const notJson = new TextEncoder().encode("not json");
    expect((await receiveWebhook(notJson, computeWebhookSignature(notJson, stack.webhookSecret))).status).toBe(400);
    const rejections = await points(`${PREFIX}.webhook.rejections`);
    expect(rejections).toContainEqual({ attributes: { [`${PREFIX}.webhook.reason`]: "invalid_signature" }, value: 2 });
    expect(rejections).toContainEqual({ attributes: { [`${PREFIX}.webhook.reason`]: "invalid_json" }, value: 1 });
  });

  it("no credential in any span name, attribute, event or metric attribute exported during these tests", async () => {
    const spans = await exportedSpans();
    expect(spans.length).toBeGreaterThan(10);
    expect(secrets.size).toBeGreaterThanOrEqual(7); // code, state, 2 access + 2 refresh tokens, client secret, webhook + session secrets
    const texts: string[] = [];
    for (const span of spans) {
      texts.push(span.name, span.status.message ?? "", JSON.stringify(span.attributes));
      for (const event of span.events) texts.push(event.name, JSON.stringify(event.attributes ?? {}));
    }
    for (const resourceMetrics of await exportedMetrics()) {
      for (const metric of resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)) {
        for (const point of metric.dataPoints) texts.push(JSON.stringify(point.attributes));
      }
    }
    const all = texts.join("\n");
    for (const secret of secrets) expect(all.includes(secret), `a credential (${secret.length} characters) was exported`).toBe(false);
    expect(all).not.toMatch(/authorization|cookie|Bearer /i);
  });
});

/** A tiny OTLP/HTTP receiver (http/json): what arrives, per path. */
async function startReceiver() {
  const received: { path: string; body: string }[] = [];
  const server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    received.push({ path: request.url ?? "", body: Buffer.concat(chunks).toString("utf8") });
    response.writeHead(200, { "Content-Type": "application/json" }).end("{}");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, close: () => server.close() };
}

describe("the built app exports over OTLP when an endpoint is set", () => {
  it("a request to the redirect_uri with a code: spans and metrics arrive over http/json, without the code", async () => {
    const receiver = await startReceiver();
    const port = await freePort();
    const child = spawn(process.execPath, [path.resolve(process.env.NEXT_DIST_DIR || ".next", "standalone", "server.js")], {
      env: {
        ...process.env,
        NODE_ENV: "production",
        HOSTNAME: "127.0.0.1",
        PORT: String(port),
        __NEXT_PROCESSED_ENV: "true",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_METRIC_EXPORT_INTERVAL: "300",
        OTEL_SERVICE_NAME: "partner-app-under-test",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; ; i++) {
        const ready = await fetch(`${base}/api/health`).then((r) => r.ok, () => false);
        if (ready) break;
        if (i > 150) throw new Error("the app did not start");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const code = `otel-test-code-${Date.now()}`;
      await fetch(`${base}/oauth/callback?code=${code}&state=otel-test-state`, { redirect: "manual" });
      for (let i = 0; i < 100 && !(receiver.received.some((r) => r.path === "/v1/traces" && r.body.includes("/oauth/callback")) && receiver.received.some((r) => r.path === "/v1/metrics")); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const traces = receiver.received.filter((r) => r.path === "/v1/traces").map((r) => r.body).join("\n");
      expect(traces).toContain("partner-app-under-test");
      expect(traces).toContain("/oauth/callback");
      expect(receiver.received.some((r) => r.path === "/v1/metrics")).toBe(true);
      const everything = receiver.received.map((r) => r.body).join("\n");
      expect(everything).not.toContain(code);
      expect(everything).not.toContain("otel-test-state");
    } finally {
      child.kill("SIGKILL");
      receiver.close();
    }
  });
});
