// `npm run new:resource` (scripts/new-resource.ts): the names it derives, the files it writes and
// the one line it adds to each registry, on a scratch copy of the files it touches. Whether its
// output compiles and passes its own tests is `npm run check:new-resource` (run by CI).
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { NameError, resourceNames } from "../../scripts/new-resource/names";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const TSX = path.join(ROOT, "node_modules/.bin/tsx");
/** The files the generator reads or edits (it writes new ones beside them). */
const TOUCHED = ["lib/sync/resources.ts", "app/dashboard/sections.ts", "sandbox/lists/index.ts", "prisma/schema.prisma", "prisma/migrations", "scripts/lib/local-env.ts", ".env.example"];

let scratch: string | undefined;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

function scratchCopy(): string {
  scratch = mkdtempSync(path.join(tmpdir(), "new-resource-unit-"));
  for (const file of TOUCHED) cpSync(path.join(ROOT, file), path.join(scratch, file), { recursive: true });
  return scratch;
}

const generate = (root: string, ...args: string[]) => run(TSX, [path.join(ROOT, "scripts/new-resource.ts"), ...args, "--root", root, "--skip-generate"], { cwd: ROOT });

describe("the names of a new resource", () => {
  it("derive every identifier from one kebab-case plural", () => {
    expect(resourceNames("tariffs")).toEqual({ slug: "tariffs", snake: "tariffs", camel: "tariffs", singular: "Tariff", pascal: "Tariffs", words: "tariffs", title: "Tariffs" });
    expect(resourceNames("charging-profiles")).toMatchObject({ snake: "charging_profiles", camel: "chargingProfiles", singular: "ChargingProfile", title: "Charging profiles" });
    expect(resourceNames("energy-meters-summaries").singular).toBe("EnergyMetersSummary");
    expect(resourceNames("addresses").singular).toBe("Address");
    expect(resourceNames("data", "datum").singular).toBe("Datum");
  });

  it("refuses what is not kebab-case, and the names the app already uses", () => {
    for (const bad of ["Tariffs", "tariffs_v2", "-tariffs", "tariffs-", "2tariffs", "tar--iffs", "", "a".repeat(41)]) expect(() => resourceNames(bad), bad).toThrow(NameError);
    for (const taken of ["teams", "charge-points", "charges", "sessions", "energy"]) expect(() => resourceNames(taken), taken).toThrow(/already/);
  });
});

// A name no fork is likely to have generated: the tests must pass in a fork that added its own resources.
const NAME = "sample-widgets";

describe("npm run new:resource", () => {
  it("writes the resource's files, a migration after the last one, and one line in each registry and the shipped scopes", async () => {
    const root = scratchCopy();
    const before = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
    const after = (file: string) => readFileSync(path.join(root, file), "utf8");
    await generate(root, NAME);

    for (const file of [`sandbox/lists/${NAME}.ts`, `lib/sync/${NAME}.ts`, `lib/dashboard/${NAME}.ts`, `app/dashboard/${NAME}/page.tsx`, `app/dashboard/${NAME}/loading.tsx`, `app/dashboard/${NAME}/error.tsx`, `app/dashboard/${NAME}/_tests/${NAME}.test.ts`, `app/dashboard/${NAME}/_tests/${NAME}.spec.ts`, `tests/sandbox/${NAME}.test.ts`]) {
      expect(existsSync(path.join(root, file)), file).toBe(true);
      expect(after(file), file).not.toMatch(/__[A-Za-z]+__/);
    }
    const migrations = readdirSync(path.join(root, "prisma/migrations")).filter((name) => /^\d{14}_/.test(name)).sort();
    expect(migrations.at(-1)).toMatch(/^\d{14}_sample_widgets$/);
    expect(after(`prisma/migrations/${migrations.at(-1)}/migration.sql`)).toContain('CREATE TABLE "synced_sample_widgets"');
    expect(after("prisma/schema.prisma")).toMatch(/^model SyncedSampleWidget \{[\s\S]*@@map\("synced_sample_widgets"\)/m);
    expect(after("prisma/schema.prisma")).toMatch(/^ {2}syncedSampleWidgets SyncedSampleWidget\[\]$/m);

    // Each registry: its entries as before, plus the new one, and its import.
    const lineDiff = (file: string) => {
      const old = new Set(before(file).split("\n"));
      return after(file).split("\n").filter((line) => !old.has(line));
    };
    // The registry's array keeps its entries and ends with the new one (one line, however many it had).
    const registered = (text: string) => /^const REGISTERED = \[(.*)\] as const;$/m.exec(text)![1]!;
    expect(registered(after("lib/sync/resources.ts"))).toBe(`${registered(before("lib/sync/resources.ts"))}, sampleWidgets`);
    expect(lineDiff("lib/sync/resources.ts")).toEqual(['import { sampleWidgets } from "./sample-widgets";', expect.stringMatching(/^const REGISTERED = /)]);
    expect(lineDiff("app/dashboard/sections.ts")).toEqual(['  { href: "/dashboard/sample-widgets", label: "Sample widgets" },']);
    // Before "Settings and access" and its comment: settings stays last in the nav.
    const hrefs = [...after("app/dashboard/sections.ts").matchAll(/^ {2}(?:\/\/.*|\{ href: "([^"]+)")/gm)].map((m) => m[1] ?? "comment");
    expect(hrefs.slice(-4)).toEqual(["/dashboard/sample-widgets", "comment", "comment", "/dashboard/settings"]);
    expect(lineDiff("sandbox/lists/index.ts")).toEqual(['import { sampleWidgets } from "./sample-widgets.js";', expect.stringMatching(/^export const EXTRA_LISTS: readonly ExtraList\[\] = \[(.+, )?sampleWidgets\];$/)]);
    expect(after("scripts/lib/local-env.ts")).toMatch(/APP_REQUESTED_SCOPES: "[^"]* sample-widgets:read"/);
    expect(after(".env.example")).toMatch(/^APP_REQUESTED_SCOPES=.* sample-widgets:read$/m);
  });

  it("refuses a name it has written before, writing nothing, and a bad name with the reason and exit code 2", async () => {
    const root = scratchCopy();
    await generate(root, NAME);
    const registry = readFileSync(path.join(root, "lib/sync/resources.ts"), "utf8");
    await expect(generate(root, NAME)).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("exists already") });
    expect(readFileSync(path.join(root, "lib/sync/resources.ts"), "utf8")).toBe(registry);
    await expect(generate(root, "Tariffs")).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("kebab-case") });
  });

  it("--help prints the usage, the options and an example, exits 0 and writes nothing", async () => {
    const root = scratchCopy();
    const registry = readFileSync(path.join(root, "lib/sync/resources.ts"), "utf8");
    for (const flag of ["--help", "-h"]) {
      const { stdout } = await generate(root, flag);
      expect(stdout).toContain("usage: npm run new:resource -- <name>");
      expect(stdout).toContain("--singular");
      expect(stdout).toMatch(/example:\n {2}npm run new:resource -- /);
    }
    expect(readFileSync(path.join(root, "lib/sync/resources.ts"), "utf8")).toBe(registry);
  });
});
