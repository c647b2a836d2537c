// Vitest: unit tests (no services), the sandbox's conformance tests (each starts its own sandbox
// in-process), and integration tests against the stack `npm test` starts (real PostgreSQL, the
// sandbox process and the built app). Run everything with `npm test`.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { scaled } from "./tests/helpers/time-scale";

const alias = {
  "@": fileURLToPath(new URL(".", import.meta.url)),
  // `server-only` throws outside a React Server Components bundle; tests are server code too.
  "server-only": fileURLToPath(new URL("./tests/helpers/server-only.ts", import.meta.url)),
};

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      // 20 s, not Vitest's 5 s: the staff password tests hash at the production scrypt cost, and `npm test`
      // runs them beside the end-to-end tests (scripts/lib/test-lanes.ts). A timeout catches a hang; it is
      // not a measure of speed (`npm run bench` is): each is scaled by the machine's load at the run's
      // start (tests/helpers/time-scale.ts).
      { resolve: { alias }, test: { name: "unit", include: ["tests/unit/**/*.test.ts"], environment: "node", testTimeout: scaled(20_000) } },
      { resolve: { alias }, test: { name: "sandbox", include: ["tests/sandbox/**/*.test.ts"], environment: "node", testTimeout: scaled(20_000) } },
      // The conformance checks against a deliberately wrong app and an in-process sandbox (no stack needed).
      { resolve: { alias }, test: { name: "conformance", include: ["tests/conformance/**/*.test.ts"], environment: "node", testTimeout: scaled(30_000) } },
      {
        resolve: { alias },
        test: {
          name: "integration",
          // A dashboard section's own tests live in its folder (app/dashboard/<section>/_tests/), so
          // that removing the section removes them (app/dashboard/sections.ts).
          include: ["tests/integration/**/*.test.ts", "app/**/_tests/**/*.test.ts"],
          environment: "node",
          // One file at a time: they share the stack's database and sandbox. (`npm test` runs two
          // stacks, with one file on each: scripts/lib/test-lanes.ts.)
          fileParallelism: false,
          testTimeout: scaled(30_000),
          hookTimeout: scaled(30_000),
        },
      },
    ],
  },
});
