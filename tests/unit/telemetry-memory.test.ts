// A process that exports nothing does not load the OpenTelemetry SDK (lib/telemetry/setup.ts and
// ./sdk.ts): @opentelemetry/sdk-node and the exporters it brings are tens of MiB of resident memory
// in every app and worker process (docs/operations.md, "Memory").
import { afterEach, describe, expect, it, vi } from "vitest";

const loaded: string[] = [];
// A module's mock factory runs only when something imports it: each one records that it was loaded.
vi.mock("@opentelemetry/sdk-node", async (original) => {
  loaded.push("@opentelemetry/sdk-node");
  return original();
});
vi.mock("@opentelemetry/instrumentation-undici", async (original) => {
  loaded.push("@opentelemetry/instrumentation-undici");
  return original();
});
let configured: Record<string, string> = {};
vi.mock("@/lib/env", () => ({ env: () => configured, logLevel: () => "silent" }));

afterEach(() => {
  loaded.length = 0;
  // startTelemetry remembers its SDK on globalThis (one per process); each test starts from none.
  delete (globalThis as Record<symbol, unknown>)[Symbol.for("partner-app.telemetry")];
  vi.resetModules();
});

describe("the OpenTelemetry SDK's loading", () => {
  it("no OTLP endpoint: startTelemetry starts nothing and loads neither the SDK nor the fetch instrumentation", async () => {
    configured = {};
    const { startTelemetry } = await import("@/lib/telemetry/setup");
    const telemetry = await startTelemetry("app");
    await telemetry.shutdown();
    expect(loaded).toEqual([]);
  });

  it("an OTLP endpoint: the SDK is loaded then, and only then", async () => {
    configured = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" };
    const { startTelemetry } = await import("@/lib/telemetry/setup");
    expect(loaded).toEqual([]);
    const telemetry = await startTelemetry("worker");
    expect(loaded).toContain("@opentelemetry/sdk-node");
    await telemetry.shutdown();
  });
});
