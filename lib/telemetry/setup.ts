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
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";

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

  // Loaded only now: the SDK is most of a process's memory that exports nothing (./sdk.ts).
  const { createTelemetrySdk, otlpTraceExporter } = await import("./sdk");
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
