// The import rules (.dependency-cruiser.mjs, run by `npm run lint`): that they can fail, and that the
// template keeps them. A rule that never fails proves nothing, so the first test gives the project's
// own configuration two files that import each other (type-only imports, the kind easiest to miss)
// and expects the circle to be refused.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** The folders and files `npm run lint` checks (package.json). */
const CHECKED = ["app", "lib", "sandbox", "scripts", "conformance", "proxy.ts", "instrumentation.ts"];
const KNOWN_VIOLATIONS_FILE = ".dependency-cruiser-known-violations.json";

type KnownViolation = { type: string; from: string; to: string; rule: { name: string } };

let options: ICruiseOptions;

beforeAll(async () => {
  options = await extractDepcruiseOptions("./.dependency-cruiser.mjs");
});

function violationsOf(output: ICruiseResult | string): IViolation[] {
  if (typeof output === "string") throw new Error("expected a cruise result, got a report");
  return output.summary.violations;
}

const described = (violation: { rule: { name: string }; from: string; to: string }) => `${violation.rule.name}: ${violation.from} → ${violation.to}`;

describe("the import rules", () => {
  let fixture: string;

  beforeAll(() => {
    // Outside the repository: a fixture inside it would be part of the real run.
    fixture = mkdtempSync(join(tmpdir(), "import-rules-"));
    mkdirSync(join(fixture, "lib"));
    writeFileSync(join(fixture, "lib", "first.ts"), 'import type { Second } from "./second";\nexport type First = { second?: Second };\n');
    writeFileSync(join(fixture, "lib", "second.ts"), 'import type { First } from "./first";\nexport type Second = { first?: First };\n');
  });

  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it("refuse two files of lib/ that import each other, even for types only", async () => {
    // The project's rules as they are, run from the fixture's folder (no tsconfig: relative imports only).
    const fixtureOptions: ICruiseOptions = { ...options, baseDir: fixture };
    delete fixtureOptions.tsConfig;
    const result = await cruise(["lib"], fixtureOptions, {}, {});
    const violations = violationsOf(result.output);
    expect(violations.length).toBeGreaterThan(0);
    for (const violation of violations) {
      expect(violation.rule).toEqual({ name: "no-circular", severity: "error" });
      expect([violation.from, violation.to].sort()).toEqual(["lib/first.ts", "lib/second.ts"]);
      expect(violation.dependencyTypes).toContain("type-only");
    }
  });

  it("refuse lib/ importing app/, and the sandbox importing lib/", async () => {
    const layered = mkdtempSync(join(tmpdir(), "import-rules-"));
    try {
      for (const folder of ["app", "lib", "sandbox"]) mkdirSync(join(layered, folder));
      writeFileSync(join(layered, "app", "page.ts"), "export const title = 'page';\n");
      writeFileSync(join(layered, "lib", "reads.ts"), 'import { title } from "../app/page";\nexport const heading = title;\n');
      writeFileSync(join(layered, "sandbox", "server.ts"), 'import { heading } from "../lib/reads";\nexport const served = heading;\n');
      const fixtureOptions: ICruiseOptions = { ...options, baseDir: layered };
      delete fixtureOptions.tsConfig;
      const result = await cruise(["app", "lib", "sandbox"], fixtureOptions, {}, {});
      expect(violationsOf(result.output).map(described).sort()).toEqual(["lib-not-to-app: lib/reads.ts → app/page.ts", "sandbox-stands-alone: sandbox/server.ts → lib/reads.ts"]);
    } finally {
      rmSync(layered, { recursive: true, force: true });
    }
  });

  it("refuse the conformance run importing the app's code or the sandbox's", async () => {
    const outside = mkdtempSync(join(tmpdir(), "import-rules-"));
    try {
      for (const folder of ["lib", "sandbox", "conformance"]) mkdirSync(join(outside, folder));
      writeFileSync(join(outside, "lib", "env.ts"), "export const secret = 'x';\n");
      writeFileSync(join(outside, "sandbox", "store.ts"), "export const state = {};\n");
      writeFileSync(join(outside, "conformance", "check.ts"), 'import { secret } from "../lib/env";\nimport { state } from "../sandbox/store";\nexport const seen = [secret, state];\n');
      const fixtureOptions: ICruiseOptions = { ...options, baseDir: outside };
      delete fixtureOptions.tsConfig;
      const result = await cruise(["lib", "sandbox", "conformance"], fixtureOptions, {}, {});
      expect(violationsOf(result.output).map(described).sort()).toEqual([
        "conformance-judges-from-outside: conformance/check.ts → lib/env.ts",
        "conformance-judges-from-outside: conformance/check.ts → sandbox/store.ts",
      ]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("hold for the template, apart from the known violations listed to be removed", async () => {
    const known = JSON.parse(readFileSync(KNOWN_VIOLATIONS_FILE, "utf8")) as KnownViolation[];
    const result = await cruise(CHECKED, options, {}, { tsConfig: extractTSConfig("tsconfig.json") });
    const violations = violationsOf(result.output);
    const knownKeys = new Set(known.map(described));
    // Nothing new: every violation is on the list.
    expect(violations.map(described).filter((violation) => !knownKeys.has(violation))).toEqual([]);
    // And the list holds nothing already fixed: it only shrinks, and a fix must take its line out.
    const found = new Set(violations.map(described));
    expect([...knownKeys].filter((violation) => !found.has(violation))).toEqual([]);
    // No circle is on the list: the template has none left.
    expect(known.filter((violation) => violation.rule.name === "no-circular")).toEqual([]);
  });
});
