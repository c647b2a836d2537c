// Runs once when a Next.js server starts, before it serves anything (Next.js's instrumentation
// hook). The whole configuration is checked here, so that a missing or template value stops the
// server at once with one message naming every problem, instead of answering 500 on every page
// (lib/env.ts). Next.js calls register() only once it listens, after it has printed "Ready", so
// the production server also runs checkConfiguration() before it starts Next.js at all (the
// standalone server.js that scripts/standalone.mjs writes): a refused configuration never says
// "Ready" and never listens. Then the shutdown bound is armed: on SIGTERM the server
// drains its in-flight requests for at most SHUTDOWN_TIMEOUT_SECONDS (lib/shutdown.ts). Last, the
// OpenTelemetry SDK starts if an OTLP endpoint is configured (lib/telemetry/setup.ts): Next.js then
// makes a span per request and per render on its own, and the app's spans and metrics are exported.
export async function checkConfiguration(): Promise<void> {
  // Next.js also compiles this file for the Edge runtime, where lib/env's process.exit does not
  // exist. It replaces NEXT_RUNTIME at build time, so this early return drops the import from the
  // Edge bundle; the standalone server calls this in plain Node, where NEXT_RUNTIME is unset.
  if (process.env.NEXT_RUNTIME === "edge") return;
  const { assertValidEnvironment } = await import("./lib/env");
  assertValidEnvironment("app");
}

export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  await checkConfiguration(); // again: `next dev` and other ways of starting Next.js
  // Each request's arrival, stamped as the node server receives it (the webhook deadline, contract §6).
  const { stampRequestArrivals } = await import("./lib/http/arrival");
  stampRequestArrivals();
  const { installShutdownHandlers } = await import("./lib/shutdown");
  installShutdownHandlers({ processName: "app" });
  const { startTelemetry } = await import("./lib/telemetry/setup");
  await startTelemetry("app");
}
