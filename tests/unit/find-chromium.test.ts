// scripts/lib/browser.ts: which Chromium `npm test` uses, and the one message when there is none;
// scripts/lib/registry-chromium.ts: where the registry's Chromium runs and what it is launched with.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findChromium, type BrowserSearch } from "../../scripts/lib/browser";
import { registryChromiumEnv, registryChromiumSupported } from "../../scripts/lib/registry-chromium";

const OWN = "/home/me/.cache/ms-playwright/chromium-1/chrome";
const REGISTRY = "/work/app/node_modules/.cache/registry-chromium/153.0.0/chromium";

function search(present: string[], overrides: Partial<BrowserSearch> = {}): BrowserSearch & { installs: number; unpacks: number } {
  const files = new Set(present);
  const s = {
    installs: 0,
    unpacks: 0,
    playwrightChromium: () => OWN,
    exists: (file: string) => files.has(file),
    registry: async () => {
      s.unpacks += 1;
      return undefined as string | undefined;
    },
    install: () => {
      s.installs += 1;
      return false;
    },
    ...overrides,
  };
  return s;
}

describe("findChromium", () => {
  it("prefers Playwright's own Chromium, then the system's, and unpacks or installs nothing when either exists", async () => {
    const registry = async () => REGISTRY;
    const both = search([OWN, "/usr/bin/chromium"], { registry });
    expect(await findChromium(both)).toEqual({ ok: true, path: OWN, source: "playwright" });
    const systemOnly = search(["/usr/bin/chromium"], { registry });
    expect(await findChromium(systemOnly)).toEqual({ ok: true, path: "/usr/bin/chromium", source: "system" });
    expect(both.installs + systemOnly.installs + both.unpacks + systemOnly.unpacks).toBe(0);
  });

  it("honours CHROMIUM_PATH, and says so when it points nowhere", async () => {
    expect(await findChromium(search(["/opt/chrome"], { explicit: "/opt/chrome" }))).toEqual({ ok: true, path: "/opt/chrome", source: "CHROMIUM_PATH" });
    const wrong = await findChromium(search([OWN], { explicit: "/opt/missing" }));
    expect(wrong).toMatchObject({ ok: false, message: expect.stringContaining("CHROMIUM_PATH is set to /opt/missing") });
  });

  it("takes the registry's Chromium when there is no other, before trying a download that needs the internet", async () => {
    const s = search([], { registry: async () => REGISTRY });
    expect(await findChromium(s)).toEqual({ ok: true, path: REGISTRY, source: "registry" });
    expect(s.installs).toBe(0);
  });

  it("TEST_BROWSER=registry takes the registry's Chromium even beside the system's and Playwright's own", async () => {
    const s = search([OWN, "/usr/bin/chromium"], { only: "registry", explicit: "/usr/bin/chromium", registry: async () => REGISTRY });
    expect(await findChromium(s)).toEqual({ ok: true, path: REGISTRY, source: "registry" });
  });

  it("TEST_BROWSER=registry where the package has no browser (not Linux x64), or with another value, stops with a message", async () => {
    const none = await findChromium(search(["/usr/bin/chromium"], { only: "registry" }));
    expect(none).toMatchObject({ ok: false, message: expect.stringContaining("Linux x64 only") });
    const typo = await findChromium(search(["/usr/bin/chromium"], { only: "regsitry" }));
    expect(typo).toMatchObject({ ok: false, message: expect.stringContaining("TEST_BROWSER is set to regsitry") });
  });

  it("says what failed when the registry's Chromium cannot be unpacked (a full disk)", async () => {
    const s = search([], {
      registry: async () => {
        throw new Error("ENOSPC: no space left on device");
      },
    });
    expect(await findChromium(s)).toEqual({ ok: false, message: expect.stringContaining("could not be unpacked: ENOSPC") });
  });

  it("runs `playwright install chromium` where there is no registry browser either, and uses what it installed", async () => {
    const files = new Set<string>();
    const s = search([], { exists: (f) => files.has(f), install: () => (files.add(OWN), true) });
    expect(await findChromium(s)).toEqual({ ok: true, path: OWN, source: "installed" });
    expect(s.unpacks).toBe(1);
  });

  it("gives up with one message naming what to install when the install fails too", async () => {
    const s = search([]);
    const found = await findChromium(s);
    expect(s.installs).toBe(1);
    expect(found.ok).toBe(false);
    if (!found.ok) {
      expect(found.message).toContain("npx playwright install chromium");
      expect(found.message).toContain("apt-get install chromium");
      expect(found.message).toContain("CHROMIUM_PATH");
    }
  });
});

describe("the registry's Chromium", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "registry-chromium-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("exists for Linux x64 only (the package ships no other binary)", () => {
    expect(registryChromiumSupported("linux", "x64")).toBe(true);
    expect(registryChromiumSupported("linux", "arm64")).toBe(false);
    expect(registryChromiumSupported("darwin", "x64")).toBe(false);
  });

  it("is launched with its own shared libraries first and its fonts; any other browser with the environment as it is", () => {
    const unpacked = path.join(dir, "153.0.0");
    mkdirSync(unpacked);
    writeFileSync(path.join(unpacked, "registry-chromium.json"), "{}");
    const env = registryChromiumEnv(path.join(unpacked, "chromium"), { PATH: "/usr/bin", LD_LIBRARY_PATH: "/opt/lib" });
    expect(env).toEqual({ PATH: "/usr/bin", LD_LIBRARY_PATH: `${path.join(unpacked, "lib")}:/opt/lib`, FONTCONFIG_PATH: unpacked });
    expect(registryChromiumEnv("/usr/bin/chromium", { PATH: "/usr/bin" })).toBeUndefined();
    expect(registryChromiumEnv(undefined)).toBeUndefined();
  });
});
