// The process itself: its mode, its log level, and where its telemetry goes (OpenTelemetry).
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";
import { urlString } from "./formats";

export const runtimeShape = {
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),

  /**
   * OpenTelemetry export (lib/telemetry/setup.ts), the standard variables of the OTLP exporter
   * specification. Unset: nothing is exported and the SDK is not even started. The SDK reads the
   * others itself (OTEL_EXPORTER_OTLP_HEADERS, OTEL_METRIC_EXPORT_INTERVAL, OTEL_BSP_*, OTEL_SDK_DISABLED...);
   * these are checked here so that a misspelt endpoint stops the process at start, not silently.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: urlString.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: urlString.optional(),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: urlString.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(["http/protobuf", "http/json", "grpc"]).optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(["http/protobuf", "http/json", "grpc"]).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
};
