// `npm run new:resource` (scripts/new-resource.ts): the names it derives, the files it writes and
// the one line it adds to each registry, on a scratch copy of the files it touches. Whether its
// output compiles and passes its own tests is `npm run check:new-resource` (run by CI).
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { FieldError, parseField, parseFields } from "../../scripts/new-resource/fields";
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

describe("the fields of a new resource (--field)", () => {
  it("name a camelCase field, its snake_case column and its header, and accept each type and its other spellings", () => {
    expect(parseField("startsAt:timestamp")).toEqual({ name: "startsAt", column: "starts_at", label: "Starts at", type: "timestamp" });
    expect(parseField("evseId:text")).toMatchObject({ column: "evse_id", label: "Evse id" });
    expect(parseField("maxKW:number")).toMatchObject({ column: "max_kw", type: "decimal" });
    expect(parseFields(["a:text", "b:integer", "c:decimal", "d:boolean", "e:timestamp"]).map((field) => field.type)).toEqual(["text", "integer", "decimal", "boolean", "timestamp"]);
  });

  it("refuse an unknown type, a name that is not camelCase, a column every table has, a reserved word and a field given twice", () => {
    expect(() => parseField("startsAt:date-time")).toThrow(/"date-time" is not a type; use one of text, integer, decimal, boolean, timestamp/);
    expect(() => parseField("startsAt")).toThrow(/<name>:<type>/);
    for (const bad of ["starts_at", "StartsAt", "2nd", "starts-at", ""]) expect(() => parseField(`${bad}:text`), bad).toThrow(/camelCase/);
    expect(() => parseField("updatedAt:timestamp")).toThrow(/has "updatedAt" already/);
    expect(() => parseField("end:timestamp")).toThrow(/reserved word in PostgreSQL/);
    expect(() => parseField("currentDate:timestamp")).toThrow(/reserved word/);
    expect(() => parseFields(["state:text", "state:integer"])).toThrow(FieldError);
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

    for (const file of [`sandbox/lists/${NAME}.ts`, `lib/sync/${NAME}.ts`, `lib/dashboard/${NAME}.ts`, `app/dashboard/${NAME}/page.tsx`, `app/dashboard/${NAME}/loading.tsx`, `app/dashboard/${NAME}/error.tsx`, `app/dashboard/${NAME}/_tests/${NAME}.test.ts`, `app/dashboard/${NAME}/_tests/${NAME}.spec.ts`, `app/dashboard/${NAME}/_tests/cells.ts`, `tests/sandbox/${NAME}.test.ts`]) {
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

  it("with fields: a column of each in the model and the migration, read by toRow, written by upsert, shown by the page", async () => {
    const root = scratchCopy();
    await generate(root, NAME, "--field", "startsAt:timestamp", "--field", "state:text", "--field", "kwh:decimal", "--field", "slots:integer", "--field", "paid:boolean");
    const after = (file: string) => readFileSync(path.join(root, file), "utf8");
    const model = /^model SyncedSampleWidget \{[\s\S]*?^\}/m.exec(after("prisma/schema.prisma"))![0];
    expect(model).toMatch(/^ {2}startsAt +DateTime\? +@map\("starts_at"\) @db\.Timestamptz\(3\)$/m);
    expect(model).toMatch(/^ {2}state +String\?$/m);
    expect(model).toMatch(/^ {2}kwh +Decimal\? +@db\.Decimal\(19, 4\)$/m);
    expect(model).toMatch(/^ {2}slots +Int\?$/m);
    expect(model).toMatch(/^ {2}paid +Boolean\?$/m);
    const migration = readdirSync(path.join(root, "prisma/migrations")).filter((name) => /^\d{14}_/.test(name)).sort().at(-1)!;
    expect(after(`prisma/migrations/${migration}/migration.sql`)).toContain('"starts_at" TIMESTAMPTZ(3),\n    "state" TEXT,\n    "kwh" DECIMAL(19,4),\n    "slots" INTEGER,\n    "paid" BOOLEAN,\n');
    const sync = after(`lib/sync/${NAME}.ts`);
    expect(sync).toContain("starts_at: timestamp(record.startsAt),");
    expect(sync).toContain("paid: bool(record.paid),");
    expect(sync).toContain("starts_at timestamptz, state text, kwh numeric, slots integer, paid boolean");
    expect(sync).toContain("starts_at = EXCLUDED.starts_at,");
    const page = after(`app/dashboard/${NAME}/page.tsx`);
    expect(page).toContain('{ label: "Starts at" },');
    expect(page).toContain("<time dateTime={item.startsAt.toISOString()}>{f.dateTime(item.startsAt)}</time>");
    expect(after(`app/dashboard/${NAME}/_tests/cells.ts`)).toContain('export const COLUMNS = ["Name", "Starts at", "State", "Kwh", "Slots", "Paid", "Changed"];');
    expect(after(`sandbox/lists/${NAME}.ts`)).toMatch(/startsAt: new Date\(Date\.UTC\(/);
    expect(sync).not.toContain("overviewHeadline: {");
  });

  it("with --headline: the resource's Overview headline, bounded by its first timestamp in the Overview's days, and its test", async () => {
    const root = scratchCopy();
    await generate(root, NAME, "--field", "state:text", "--field", "startsAt:timestamp", "--headline");
    const sync = readFileSync(path.join(root, `lib/sync/${NAME}.ts`), "utf8");
    expect(sync).toContain('overviewHeadline: {\n    label: "Sample widgets",');
    expect(sync).toContain("AND starts_at >= (${from}::date::timestamp AT TIME ZONE ${timeZone})");
    expect(readFileSync(path.join(root, `app/dashboard/${NAME}/_tests/${NAME}.test.ts`), "utf8")).toContain('data-testid="headline-sample_widgets-value"');
  });

  it("refuses a bad field with the reason and exit code 2, writing nothing", async () => {
    const root = scratchCopy();
    const schema = readFileSync(path.join(root, "prisma/schema.prisma"), "utf8");
    await expect(generate(root, NAME, "--field", "startsAt:date")).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('"date" is not a type') });
    await expect(generate(root, NAME, "--field", "starts_at:timestamp")).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("camelCase") });
    expect(readFileSync(path.join(root, "prisma/schema.prisma"), "utf8")).toBe(schema);
    expect(existsSync(path.join(root, `lib/sync/${NAME}.ts`))).toBe(false);
  });

  it("--help prints the usage, the options and an example, exits 0 and writes nothing", async () => {
    const root = scratchCopy();
    const registry = readFileSync(path.join(root, "lib/sync/resources.ts"), "utf8");
    for (const flag of ["--help", "-h"]) {
      const { stdout } = await generate(root, flag);
      expect(stdout).toContain("usage: npm run new:resource -- <name>");
      expect(stdout).toContain("--singular");
      expect(stdout).toMatch(/--field .*text, integer, decimal, boolean, timestamp/s);
      expect(stdout).toMatch(/example:\n {2}npm run new:resource -- /);
    }
    expect(readFileSync(path.join(root, "lib/sync/resources.ts"), "utf8")).toBe(registry);
  });
});
