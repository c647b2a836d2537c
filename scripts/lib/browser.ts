// Finds a Chromium for the end-to-end tests, before anything else starts, so that a machine
// without one gets one clear message instead of a dozen "Executable doesn't exist" failures.
//
// In order: CHROMIUM_PATH when set; Playwright's own Chromium when installed; the system's
// (Debian's `chromium`, which .ci/run installs); else `playwright install chromium`, the standard
// way on a machine with internet. Only if all of that fails does it give up, saying what to install.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

export const SYSTEM_CHROMIUM_PATHS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"];

export type BrowserSearch = {
  /** CHROMIUM_PATH, if the person running the tests chose one. */
  explicit?: string;
  /** Where Playwright's own Chromium lives (whether or not it is installed). */
  playwrightChromium: () => string;
  exists: (file: string) => boolean;
  /** Runs `playwright install chromium`; true when it succeeded. */
  install: () => boolean;
};

export type BrowserFound = { ok: true; path: string; source: "CHROMIUM_PATH" | "playwright" | "system" | "installed" } | { ok: false; message: string };

export function findChromium(search: BrowserSearch): BrowserFound {
  if (search.explicit) {
    if (search.exists(search.explicit)) return { ok: true, path: search.explicit, source: "CHROMIUM_PATH" };
    return { ok: false, message: `CHROMIUM_PATH is set to ${search.explicit}, which does not exist. Fix it or unset it.` };
  }
  const own = search.playwrightChromium();
  if (search.exists(own)) return { ok: true, path: own, source: "playwright" };
  const system = SYSTEM_CHROMIUM_PATHS.find((file) => search.exists(file));
  if (system) return { ok: true, path: system, source: "system" };
  if (search.install() && search.exists(search.playwrightChromium())) return { ok: true, path: search.playwrightChromium(), source: "installed" };
  return {
    ok: false,
    message: [
      "The end-to-end tests need Chromium, and none was found or could be installed.",
      "Install one of:",
      "  - Playwright's own:   npx playwright install chromium   (needs internet)",
      "  - Debian or Ubuntu:   sudo apt-get install chromium",
      "  - or point CHROMIUM_PATH at any Chromium or Chrome binary.",
      "`npm test -- vitest` runs everything else without a browser.",
    ].join("\n"),
  };
}

/** findChromium() on this machine. */
export async function findChromiumHere(): Promise<BrowserFound> {
  const { chromium } = await import("@playwright/test");
  return findChromium({
    explicit: process.env.CHROMIUM_PATH || undefined,
    playwrightChromium: () => chromium.executablePath(),
    exists: existsSync,
    install: () => {
      console.log("[test] no Chromium found: running `playwright install chromium`");
      const result = spawnSync(path.resolve("node_modules/.bin/playwright"), ["install", "chromium"], { stdio: "inherit", timeout: 5 * 60_000 });
      return result.status === 0;
    },
  });
}
