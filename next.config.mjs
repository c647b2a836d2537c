// Next.js configuration for the partner app.
/** @type {import("next").NextConfig} */
const nextConfig = {
  // A second test suite beside a first one builds into its own folder (scripts/test.ts).
  distDir: process.env.NEXT_DIST_DIR || ".next",
  // The app is served behind whatever the partner deploys it on; never advertise the framework.
  poweredByHeader: false,
  output: "standalone",
  // pino and pg are Node-only; keep them out of the server bundle so their workers and native
  // bindings resolve from node_modules at run time. The OpenTelemetry SDK too (instrumentation.ts):
  // it loads its exporters (gRPC's included) at run time, and the API must be one copy per process.
  serverExternalPackages: ["pino", "pg", "@prisma/adapter-pg", "pg-boss", "@opentelemetry/api", "@opentelemetry/sdk-node", "@opentelemetry/instrumentation-undici", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/exporter-trace-otlp-proto", "@opentelemetry/exporter-trace-otlp-grpc"],
  // `next dev` logs every request URL. The redirect_uri's query holds the authorization code, and
  // no code may reach a log line, so that route is left out of the request log.
  logging: { incomingRequests: { ignore: [/\/oauth\/callback/] } },
  // The API routes answer JSON to servers (the service's webhooks, schedulers) and to next-auth's
  // client code, never a page to render, so they get a fixed "render nothing" policy (OWASP's REST
  // security headers). Pages get theirs, with a per-request nonce, from proxy.ts
  // (lib/http/security-headers.ts); the proxy stays off /api because it would buffer request bodies.
  async headers() {
    return [
      {
        source: "/api/:path*",
        headers: [
          { key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" },
          { key: "X-Frame-Options", value: "DENY" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "no-referrer" },
        ],
      },
    ];
  },
  // Type errors in the app fail the build. The build checks the app only (tsconfig.app.json);
  // `npm run typecheck` checks everything, the sandbox, scripts and tests included.
  typescript: { ignoreBuildErrors: false, tsconfigPath: "tsconfig.app.json" },
};

export default nextConfig;
