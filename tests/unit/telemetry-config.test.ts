// lib/env.ts's OpenTelemetry variables: a misspelt endpoint or protocol stops the process at start,
// instead of an exporter that silently sends nowhere (lib/telemetry/setup.ts).
import { describe, expect, it } from "vitest";
import { environmentProblems } from "@/lib/env";
import { generateLocalEnv } from "../../scripts/lib/local-env";

describe("OTEL_* configuration", () => {
  const local = { ...generateLocalEnv({ app: 3000, sandbox: 4010 }), DATABASE_URL: "postgresql://localhost:5432/partner_app" };

  it("accepts the standard variables, or none", () => {
    expect(environmentProblems(local)).toEqual([]);
    expect(
      environmentProblems({
        ...local,
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://api.honeycomb.io/v1/traces",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_SERVICE_NAME: "partner-app-eu",
      }),
    ).toEqual([]);
  });

  it("names a malformed endpoint and an unknown protocol", () => {
    const problems = environmentProblems({ ...local, OTEL_EXPORTER_OTLP_ENDPOINT: "otel-collector:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "http/xml" });
    expect(problems.map((p) => p.split(":")[0]).sort()).toEqual(["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL"]);
  });
});
