// Finds a Chromium for the end-to-end tests, before anything else starts, so that a machine
// without one gets one clear message instead of a dozen "Executable doesn't exist" failures.
//
// In order: CHROMIUM_PATH when set; Playwright's own Chromium when installed; the system's
// (Debian's `chromium`, for example); on Linux x64, the Chromium that the devDependency
// `@sparticuz/chromium` carries (scripts/lib/registry-chromium.ts), so that a fresh machine that
// reaches nothing but the npm registry runs the whole suite after `npm install`; elsewhere
// `playwright install chromium`, the standard way on a machine with internet. Only if all of that
// fails does it give up, saying what to install.
//
// TEST_BROWSER=registry skips the first three and takes the registry's Chromium: how CI proves the
// path a fresh machine takes on a machine that has another browser (docs/testing.md).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { registryChromium } from "./registry-chromium";

export const SYSTEM_CHROMIUM_PATHS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"];

export type BrowserSearch = {
  /** CHROMIUM_PATH, if the person running the tests chose one. */
  explicit?: string;
  /** TEST_BROWSER: "registry" takes the registry's Chromium and nothing else. */
  only?: string;
  /** Where Playwright's own Chromium lives (whether or not it is installed). */
  playwrightChromium: () => string;
  exists: (file: string) => boolean;
  /** The registry's Chromium, unpacked; undefined where the package has none for this machine. */
  registry: () => Promise<string | undefined>;
  /** Runs `playwright install chromium`; true when it succeeded. */
  install: () => boolean;
};

export type BrowserFound =
  | { ok: true; path: string; source: "CHROMIUM_PATH" | "playwright" | "system" | "registry" | "installed" }
  | { ok: false; message: string };

async function fromRegistry(search: BrowserSearch): Promise<BrowserFound | undefined> {
  try {
    const found = await search.registry();
    return found ? { ok: true, path: found, source: "registry" } : undefined;
  } catch (error) {
    return { ok: false, message: `The registry's Chromium (@sparticuz/chromium) could not be unpacked: ${error instanceof Error ? error.message : String(error)}` };
  }
}

export async function findChromium(search: BrowserSearch): Promise<BrowserFound> {
  if (search.only === "registry") {
    return (await fromRegistry(search)) ?? { ok: false, message: "TEST_BROWSER=registry: the registry's Chromium (@sparticuz/chromium) exists for Linux x64 only. Unset TEST_BROWSER." };
  }
  if (search.only) return { ok: false, message: `TEST_BROWSER is set to ${search.only}; the one value it takes is "registry". Fix it or unset it.` };
  if (search.explicit) {
    if (search.exists(search.explicit)) return { ok: true, path: search.explicit, source: "CHROMIUM_PATH" };
    return { ok: false, message: `CHROMIUM_PATH is set to ${search.explicit}, which does not exist. Fix it or unset it.` };
  }
  const own = search.playwrightChromium();
  if (search.exists(own)) return { ok: true, path: own, source: "playwright" };
  const system = SYSTEM_CHROMIUM_PATHS.find((file) => search.exists(file));
  if (system) return { ok: true, path: system, source: "system" };
  const registry = await fromRegistry(search);
  if (registry) return registry;
  if (search.install() && search.exists(search.playwrightChromium())) return { ok: true, path: search.playwrightChromium(), source: "installed" };
  return {
    ok: false,
    message: [
      "The end-to-end tests need Chromium, and none was found or could be installed.",
      "(The one that `npm install` brings, @sparticuz/chromium, runs on Linux x64 only.) Install one of:",
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
    only: process.env.TEST_BROWSER || undefined,
    playwrightChromium: () => chromium.executablePath(),
    exists: existsSync,
    registry: registryChromium,
    install: () => {
      console.log("[test] no Chromium found: running `playwright install chromium`");
      const result = spawnSync(path.resolve("node_modules/.bin/playwright"), ["install", "chromium"], { stdio: "inherit", timeout: 5 * 60_000 });
      return result.status === 0;
    },
  });
}
