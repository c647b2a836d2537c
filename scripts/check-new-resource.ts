// npm run check:new-resource: proves that `npm run new:resource` writes a resource that works as
// written. On a scratch copy of this checkout (your files are never touched) it generates one
// (`tariffs`, with a field of each type and an Overview headline), then runs what CI runs on it: the
// typecheck, the linters, and the generated tests with the schema-drift test (the generated migration
// against the generated model), on one stack. The generated tests check the page's column headers
// and each record's cells, times in the operator's zone, against the sandbox's records
// (app/dashboard/tariffs/_tests/cells.ts), and the headline's figure on the Overview for one day.
// CI runs it after `npm test` (.ci/run and .github/workflows/ci.yml): 1.5 to 3 minutes, most of it the
// scratch app's production build.
//
// `--quick` stops before that build: generate, typecheck, lint, import rules, and the generated
// sandbox test (no stack needed), in about 30 seconds: for a fork whose CI has no time to spare.
//
// TEST_PORT_OFFSET applies as for `npm test`; KEEP_SCRATCH=1 leaves the copy for a look afterwards.
import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const NAME = "tariffs";
// One field of each type (scripts/new-resource/fields.ts): one generated resource, one scratch build, every type.
const FIELDS = ["validFrom:timestamp", "zone:text", "pricePerKwh:decimal", "maxPower:integer", "public:boolean"];
const QUICK = process.argv.includes("--quick");
const started = performance.now();
const seconds = () => Math.round((performance.now() - started) / 1000);

function run(step: string, command: string, args: string[], options: SpawnSyncOptions = {}): void {
  console.log(`[check:new-resource] ${step}: ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { stdio: "inherit", ...options });
  if (result.status !== 0) {
    console.error(`[check:new-resource] ${step} failed (exit ${result.status ?? result.signal}) after ${seconds()} s${scratch ? `; the copy is in ${scratch}` : ""}`);
    process.exit(1);
  }
}

// The copy: what git tracks plus what it would track (a fork's uncommitted files), never what it
// ignores (.next, .data, secrets). node_modules is hard-linked where the platform allows: a full
// copy is a gigabyte, and a symlink will not do (Turbopack refuses a node_modules outside the project).
const listed = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
if (listed.status !== 0) {
  console.error("[check:new-resource] needs a git checkout (it copies the files git tracks)");
  process.exit(2);
}
const scratch = mkdtempSync(path.join(tmpdir(), "new-resource-"));
for (const file of listed.stdout.split("\0").filter(Boolean)) {
  mkdirSync(path.join(scratch, path.dirname(file)), { recursive: true });
  try {
    cpSync(file, path.join(scratch, file));
  } catch (error) {
    // A file git lists but the checkout deleted (not yet committed) is not part of the copy.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
if (spawnSync("cp", ["-al", "node_modules", path.join(scratch, "node_modules")]).status !== 0) {
  cpSync("node_modules", path.join(scratch, "node_modules"), { recursive: true, verbatimSymlinks: true });
}
console.log(`[check:new-resource] copied this checkout to ${scratch} in ${seconds()} s`);

const inScratch: SpawnSyncOptions = { cwd: scratch, env: { ...process.env, FORCE_COLOR: "0" } };
const bin = (name: string) => path.join(scratch, "node_modules", ".bin", name);
const generated = [`tests/sandbox/${NAME}.test.ts`, `app/dashboard/${NAME}/_tests/${NAME}.test.ts`, `app/dashboard/${NAME}/_tests/${NAME}.spec.ts`];
try {
  run("generate", bin("tsx"), ["scripts/new-resource.ts", NAME, ...FIELDS.flatMap((field) => ["--field", field]), "--headline"], inScratch);
  run("typecheck", bin("tsc"), ["--noEmit"], inScratch);
  run("lint", bin("eslint"), ["sandbox/lists", `lib/sync/${NAME}.ts`, `lib/dashboard/${NAME}.ts`, `app/dashboard/${NAME}`, "app/dashboard/sections.ts", "lib/sync/resources.ts", ...generated], inScratch);
  run("import rules", "npm", ["run", "-s", "lint:imports"], inScratch);
  if (QUICK) run("the generated sandbox test", bin("vitest"), ["run", "--project", "sandbox", generated[0]!], inScratch);
  else run("the generated tests", "npm", ["test", "--", "files", ...generated, "tests/integration/db/schema-drift.test.ts"], inScratch);
} finally {
  if (process.env.KEEP_SCRATCH !== "1") rmSync(scratch, { recursive: true, force: true });
}
console.log(`[check:new-resource] a generated resource passes its checks and ${QUICK ? "its sandbox test (--quick: not the app's tests)" : "its tests"} (${seconds()} s)`);
