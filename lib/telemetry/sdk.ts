// The OpenTelemetry SDK for Node as the app and the worker run it (createTelemetrySdk), and the OTLP
// trace exporter for the configured protocol. Apart from ./setup.ts so that it is loaded only when an
// OTLP endpoint is set: @opentelemetry/sdk-node brings every exporter it may choose from (gRPC's and
// protobuf's included), about 40 MiB of resident memory, which a process that exports nothing would
// carry for nothing (docs/operations.md, "Memory").
import "server-only";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { MetricReader } from "@opentelemetry/sdk-metrics";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { env } from "@/lib/env";
import { RedactingSpanExporter } from "./redact";

/**
 * The OTLP trace exporter for the configured protocol, the choice the SDK itself makes from
 * OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL. Made here rather than by the SDK only because the exporter
 * has to be wrapped in the redaction (./redact.ts), and the SDK's own choice cannot be wrapped.
 * Each exporter reads its endpoint, headers, timeout and compression from the environment itself.
 */
export async function otlpTraceExporter(): Promise<SpanExporter> {
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
