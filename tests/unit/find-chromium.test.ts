// scripts/lib/browser.ts: which Chromium `npm test` uses, and the one message when there is none.
import { describe, expect, it } from "vitest";
import { findChromium, type BrowserSearch } from "../../scripts/lib/browser";

const OWN = "/home/me/.cache/ms-playwright/chromium-1/chrome";

function search(present: string[], overrides: Partial<BrowserSearch> = {}): BrowserSearch & { installs: number } {
  const files = new Set(present);
  const s = {
    installs: 0,
    playwrightChromium: () => OWN,
    exists: (file: string) => files.has(file),
    install: () => {
      s.installs += 1;
      return false;
    },
    ...overrides,
  };
  return s;
}

describe("findChromium", () => {
  it("prefers Playwright's own Chromium, then the system's, and installs nothing when either exists", () => {
    const both = search([OWN, "/usr/bin/chromium"]);
    expect(findChromium(both)).toEqual({ ok: true, path: OWN, source: "playwright" });
    const systemOnly = search(["/usr/bin/chromium"]);
    expect(findChromium(systemOnly)).toEqual({ ok: true, path: "/usr/bin/chromium", source: "system" });
    expect(both.installs + systemOnly.installs).toBe(0);
  });

  it("honours CHROMIUM_PATH, and says so when it points nowhere", () => {
    expect(findChromium(search(["/opt/chrome"], { explicit: "/opt/chrome" }))).toEqual({ ok: true, path: "/opt/chrome", source: "CHROMIUM_PATH" });
    const wrong = findChromium(search([OWN], { explicit: "/opt/missing" }));
    expect(wrong).toMatchObject({ ok: false, message: expect.stringContaining("CHROMIUM_PATH is set to /opt/missing") });
  });

  it("runs `playwright install chromium` when there is none, and uses what it installed", () => {
    const files = new Set<string>();
    const s = search([], { exists: (f) => files.has(f), install: () => (files.add(OWN), true) });
    expect(findChromium(s)).toEqual({ ok: true, path: OWN, source: "installed" });
  });

  it("gives up with one message naming what to install when the install fails too", () => {
    const s = search([]);
    const found = findChromium(s);
    expect(s.installs).toBe(1);
    expect(found.ok).toBe(false);
    if (!found.ok) {
      expect(found.message).toContain("npx playwright install chromium");
      expect(found.message).toContain("apt-get install chromium");
      expect(found.message).toContain("CHROMIUM_PATH");
    }
  });
});
