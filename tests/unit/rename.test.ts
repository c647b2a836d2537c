// `npm run rename` (scripts/rename.ts, scripts/lib/rename.ts) on a scratch copy of the files it
// rewrites: the new names land in each, a second run changes nothing, bad arguments exit with 2 and
// a file edited by hand stops the run before anything is written.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PRODUCT_IDENTITY } from "@/lib/config/product";
import { RENAMED_FILES, RenameTargetError, RenameUsageError, parseIdentity, renameProduct } from "../../scripts/lib/rename";

const root = path.resolve(__dirname, "../..");
/** Names no fork is likely to have, so that these tests hold after `npm run rename` too. */
const ZEPHYR = { displayName: "Zephyr Fleet", mark: PRODUCT_IDENTITY.mark, slug: "zephyr-fleet" };

let scratch: string;
const read = (file: string) => readFileSync(path.join(scratch, file), "utf8");
const snapshot = () => Object.fromEntries(RENAMED_FILES.map((file) => [file, read(file)]));

/** The script itself, as `npm run rename` runs it (tsx), on the scratch copy. */
function runScript(...args: string[]) {
  const result = spawnSync(path.join(root, "node_modules/.bin/tsx"), [path.join(root, "scripts/rename.ts"), ...args, "--root", scratch], { encoding: "utf8", cwd: root });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeEach(() => {
  scratch = mkdtempSync(path.join(tmpdir(), "rename-"));
  for (const file of RENAMED_FILES) {
    mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(scratch, file));
  }
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

describe("npm run rename", () => {
  it("writes the new names into every file it owns, and a second run changes nothing", () => {
    const before = snapshot();
    expect(renameProduct(scratch, ZEPHYR).sort()).toEqual([...RENAMED_FILES].sort());

    expect((JSON.parse(read("package.json")) as { name: string }).name).toBe("zephyr-fleet");
    const lock = JSON.parse(read("package-lock.json")) as { name: string; packages: Record<string, { name?: string }> };
    expect([lock.name, lock.packages[""]?.name]).toEqual(["zephyr-fleet", "zephyr-fleet"]);
    // Only the name lines moved: the lock file is otherwise byte for byte what npm wrote.
    expect(read("package-lock.json").split("\n").filter((line, i) => line !== before["package-lock.json"]!.split("\n")[i])).toHaveLength(2);

    const compose = read("compose.yaml");
    expect(compose).toContain("POSTGRES_DB: zephyr_fleet\n");
    expect(compose).toContain("pg_isready -U zephyr_fleet -d zephyr_fleet");
    expect(compose.match(/postgresql:\/\/zephyr_fleet:\$\{POSTGRES_PASSWORD\}@db:5432\/zephyr_fleet/g)).toHaveLength(3);

    const example = read(".env.example");
    expect(example).toMatch(/^APP_NAME=Zephyr Fleet$/m);
    expect(example).toMatch(/^DATABASE_URL=\S+:5432\/zephyr_fleet$/m);
    expect(example).toMatch(/^# ALERT_WEBHOOK_URL=\S+\/hooks\/zephyr-fleet$/m);
    expect(read("prisma.config.ts")).toContain('"postgresql://localhost:5432/zephyr_fleet"');

    const names = read("lib/config/product.ts");
    expect(names).toContain(`export const PRODUCT_IDENTITY = {\n  displayName: "Zephyr Fleet",\n  mark: ${JSON.stringify(ZEPHYR.mark)},\n  slug: "zephyr-fleet",\n} as const`);
    expect(names.replace(/displayName: .*|slug: .*/g, "")).toBe(before["lib/config/product.ts"]!.replace(/displayName: .*|slug: .*/g, ""));

    const renamed = snapshot();
    expect(renameProduct(scratch, ZEPHYR)).toEqual([]);
    expect(snapshot()).toEqual(renamed);
  });

  it("renaming to the names this copy already has changes nothing (the files agree with the module)", () => {
    expect(renameProduct(scratch, PRODUCT_IDENTITY)).toEqual([]);
  });

  it("writes a display name with an apostrophe and a new mark as valid source", () => {
    renameProduct(scratch, parseIdentity("O'Neil Charging", "oneil", "ON"));
    expect(read("lib/config/product.ts")).toContain(`  displayName: "O'Neil Charging",\n  mark: "ON",\n  slug: "oneil",\n`);
    expect(read(".env.example")).toMatch(/^APP_NAME=O'Neil Charging$/m);
  });

  it("refuses a bad slug or display name, and missing arguments, as a usage error", () => {
    expect(() => parseIdentity("Zephyr Fleet", "Zephyr_Fleet")).toThrow(RenameUsageError);
    expect(() => parseIdentity("", "zephyr-fleet")).toThrow(/display name is empty/);
    expect(() => parseIdentity("Zephyr # Fleet", "zephyr-fleet")).toThrow(RenameUsageError);
    expect(() => parseIdentity("Zephyr Fleet", undefined)).toThrow(/display name and a slug/);
    expect(parseIdentity("  Zephyr Fleet ", "zephyr-fleet")).toEqual(ZEPHYR);
  });

  it("stops before writing anything when a file was edited by hand", () => {
    writeFileSync(path.join(scratch, ".env.example"), read(".env.example").replace(/^APP_NAME=.*\n/m, ""));
    const before = snapshot();
    expect(() => renameProduct(scratch, ZEPHYR)).toThrow(RenameTargetError);
    expect(snapshot()).toEqual(before);
  });

  it("as a command: prints each file it changed, nothing the second time, and exits with 2 on a bad slug without writing", () => {
    const before = snapshot();
    const bad = runScript("Zephyr Fleet", "Zephyr_Fleet");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/the slug is lower-case letters/);
    expect(bad.stderr).toContain("usage: npm run rename");
    expect(runScript("Zephyr", "Fleet", "zephyr-fleet").status).toBe(2); // a display name with a space, unquoted
    expect(snapshot()).toEqual(before);

    const first = runScript("Zephyr Fleet", "zephyr-fleet");
    expect(first.status).toBe(0);
    expect(first.stdout.split("\n").filter((line) => line.startsWith("changed ")).sort()).toEqual(RENAMED_FILES.map((file) => `changed ${file}`).sort());
    const second = runScript("Zephyr Fleet", "zephyr-fleet");
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/nothing to change/);
  });

  it("--help prints the usage, the options and an example, exits 0 and writes nothing", () => {
    const before = snapshot();
    for (const flag of ["--help", "-h"]) {
      const help = runScript(flag);
      expect(help.status, flag).toBe(0);
      expect(help.stdout).toContain("usage: npm run rename");
      expect(help.stdout).toContain("--mark");
      expect(help.stdout).toMatch(/example:\n {2}npm run rename -- "/);
    }
    expect(snapshot()).toEqual(before);
  });
});
