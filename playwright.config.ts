// Playwright end-to-end tests, in a real Chromium, against the stack `npm test` starts.
//
// `npm test` finds the browser before anything starts (scripts/lib/browser.ts: Playwright's own
// Chromium when installed, else the system's, else on Linux x64 the one the devDependency
// @sparticuz/chromium carries) and passes it as CHROMIUM_PATH. Run directly, Playwright uses
// CHROMIUM_PATH or its own browser.
import { defineConfig } from "@playwright/test";
import { registryChromiumEnv } from "./scripts/lib/registry-chromium";
import { scaled } from "./tests/helpers/time-scale";

const executablePath = process.env.CHROMIUM_PATH || undefined;

export default defineConfig({
  // tests/e2e/, and each dashboard section's own tests in its folder (app/dashboard/<section>/_tests/),
  // so that removing the section removes them (app/dashboard/sections.ts).
  testDir: ".",
  testMatch: ["tests/e2e/**/*.spec.ts", "app/**/_tests/**/*.spec.ts"],
  testIgnore: ["**/node_modules/**", "**/.next/**", "**/.data/**"],
  // The tests share one sandbox and database, and some move the sandbox's clock.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  // Timeouts catch hangs; each is scaled by the machine's load at the run's start (tests/helpers/time-scale.ts).
  timeout: scaled(60_000),
  expect: { timeout: scaled(5_000) },
  reporter: [["list"], ["json"]],
  outputDir: `${process.env.TEST_DATA_DIR ?? ".data/test"}/playwright`,
  use: {
    baseURL: process.env.APP_URL ?? "http://localhost:3100",
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath,
      // The registry's Chromium brings its own shared libraries and font (scripts/lib/registry-chromium.ts).
      env: registryChromiumEnv(executablePath),
      // Chromium's own background traffic is refused on closed networks and slows every start.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
});
