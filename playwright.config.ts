// Playwright end-to-end tests, in a real Chromium, against the stack `npm test` starts.
//
// Playwright's own browser download cannot work on offline machines, so the tests use the system's
// Chromium (Debian's `chromium` package, which .ci/run installs when it is missing).
import { existsSync } from "node:fs";
import { defineConfig } from "@playwright/test";

const systemChromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export default defineConfig({
  testDir: "tests/e2e",
  // The tests share one sandbox and database, and some move the sandbox's clock.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 60_000,
  reporter: [["list"], ["json"]],
  outputDir: `${process.env.TEST_DATA_DIR ?? ".data/test"}/playwright`,
  use: {
    baseURL: process.env.APP_URL ?? "http://localhost:3100",
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: existsSync(systemChromium) ? systemChromium : undefined,
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
