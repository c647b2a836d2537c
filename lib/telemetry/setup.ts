// Starts the OpenTelemetry SDK for Node (@opentelemetry/sdk-node) in the app (instrumentation.ts) and
// the worker (scripts/worker.ts), configured by the standard environment variables of the OTLP
// exporter specification:
//
//   OTEL_EXPORTER_OTLP_ENDPOINT              the collector, e.g. http://otel-collector:4318 (both signals)
//   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
//   OTEL_EXPORTER_OTLP_METRICS_ENDPOINT      one signal's full URL, e.g. https://api.honeycomb.io/v1/traces
//   OTEL_EXPORTER_OTLP_PROTOCOL (_TRACES_)   http/protobuf (default), http/json or grpc
//   OTEL_EXPORTER_OTLP_HEADERS (_TRACES_, _METRICS_)   e.g. x-honeycomb-team=<key> (read by the SDK)
//   OTEL_SERVICE_NAME                        default the product's slug, and slug-worker (lib/config/product.ts)
//   OTEL_METRIC_EXPORT_INTERVAL, OTEL_BSP_SCHEDULE_DELAY, OTEL_TRACES_SAMPLER, OTEL_SDK_DISABLED...
//
// No endpoint for a signal: that signal is not set up at all, and with neither the SDK is not
// started, so the API stays a no-op (the OTLP exporters would otherwise default to localhost:4318
// and try to send there every few seconds). What goes out is described in docs/operations.md.
import "server-only";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { MetricReader } from "@opentelemetry/sdk-metrics";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { RedactingSpanExporter } from "./redact";

export type Telemetry = {
  /** Exports what is buffered and stops the SDK. Call before the process exits. */
  shutdown(): Promise<void>;
};

const NOTHING_TO_SHUT_DOWN: Telemetry = { shutdown: async () => {} };

// One SDK per process: `next dev` may run the instrumentation hook again, and a second SDK would
// patch fetch twice and fail to register its providers (the API keeps the first).
const STARTED_KEY = Symbol.for("partner-app.telemetry");
const globalWithTelemetry = globalThis as typeof globalThis & { [STARTED_KEY]?: Telemetry };

/**
 * The OTLP trace exporter for the configured protocol, the choice the SDK itself makes from
 * OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL. Made here rather than by the SDK only because the exporter
 * has to be wrapped in the redaction (./redact.ts), and the SDK's own choice cannot be wrapped.
 * Each exporter reads its endpoint, headers, timeout and compression from the environment itself.
 */
async function otlpTraceExporter(): Promise<SpanExporter> {
  const { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL } = env();
  switch (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf") {
    case "http/json":
      return new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
    case "grpc":
      return new (await import("@opentelemetry/exporter-trace-otlp-grpc")).OTLPTraceExporter();
    case "http/protobuf":
      return new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();
  }
}

/**
 * The SDK as the app runs it: spans through the redaction to `spanExporter` (batched, OTEL_BSP_*),
 * metrics to `metricReaders` (undefined: the SDK's own choice from OTEL_METRICS_EXPORTER and the
 * OTLP variables; []: none), and the fetch instrumentation (undici's diagnostics channels, so it
 * sees every fetch of the process: the token endpoint, the partner API, Next.js's own). No logs:
 * the log is pino's (lib/log.ts). Exported for the tests, which pass in-memory exporters.
 */
export function createTelemetrySdk(options: { serviceName: string; spanExporter?: SpanExporter; metricReaders?: MetricReader[]}): NodeSDK {
  const { OTEL_SERVICE_NAME } = env();
  return new NodeSDK({
    // The env detector reads OTEL_SERVICE_NAME; `serviceName` would override it, so it is given only as the default.
    ...(OTEL_SERVICE_NAME ? {} : { serviceName: options.serviceName }),
    ...(options.spanExporter ? { traceExporter: new RedactingSpanExporter(options.spanExporter) } : { spanProcessors: [] }),
    metricReaders: options.metricReaders,
    logRecordProcessors: [],
    instrumentations: [
      new UndiciInstrumentation({
        // Headers are never recorded (the default; said here so that nobody adds Authorization).
        headersToSpanAttributes: { requestHeaders: [], responseHeaders: [] },
      }),
    ],
  });
}

/**
 * Starts the SDK when an OTLP endpoint is configured; returns how to stop it. Called once per process,
 * after the configuration was checked (lib/env.ts), before any work.
 */
export async function startTelemetry(processName: "app" | "worker"): Promise<Telemetry> {
  const started = globalWithTelemetry[STARTED_KEY];
  if (started) return started;
  const { OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT } = env();
  const traces = Boolean(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? OTEL_EXPORTER_OTLP_ENDPOINT);
  const metrics = Boolean(OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!traces && !metrics) return NOTHING_TO_SHUT_DOWN;

  const sdk = createTelemetrySdk({
    serviceName: PRODUCT.otelServiceName[processName],
    spanExporter: traces ? await otlpTraceExporter() : undefined,
    metricReaders: metrics ? undefined : [],
  });
  sdk.start();
  const telemetry: Telemetry = {
    shutdown: () => sdk.shutdown().catch((error: unknown) => logger.warn({ err: error }, "OpenTelemetry could not flush on shutdown")),
  };
  globalWithTelemetry[STARTED_KEY] = telemetry;
  // Which signals only: an endpoint can carry a key in its query, and the headers are API keys.
  logger.info({ process: processName, traces, metrics }, "OpenTelemetry export started");
  return telemetry;
}
