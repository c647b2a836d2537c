// Assembles the files of the `worker` and `migrate` container images, exactly as the images hold them:
// the Dockerfile runs this in its build stage and copies <out> into a slim stage (like `runtime`), and
// the test suite runs it too (tests/integration/runtime-image.test.ts), so these images are tested on
// every CI run even on machines that cannot build images.
//
//   node scripts/assemble-jobs.mjs <worker|migrate> <out>
//
// Each is one JavaScript file bundled by esbuild from scripts/<name>.ts with everything it imports
// (lib/, the Prisma client with its query compiler, pg, pg-boss, pino, OpenTelemetry...): no sources,
// no devDependencies, no node_modules at all. Nothing it loads is native or read from disk beside a
// package: Prisma 7's query compiler (WebAssembly) ships inlined in a JavaScript module, which bundles
// like any other. <out> then holds:
//   worker   worker.mjs                       node worker.mjs
//   migrate  migrate.mjs, prisma/migrations/  node migrate.mjs (it reads the migrations beside it)
//
// Plain JavaScript, so it runs before anything is compiled; it needs esbuild (a devDependency), which the
// build stage has.
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import { build } from "esbuild";

const TARGETS = {
  // The worker imports the app's lib/, written for React Server Components: `react-server` is the
  // condition `npm run worker` runs it with (package.json), which makes `import "server-only"` a no-op.
  worker: { entry: "scripts/worker.ts", conditions: ["react-server"], migrations: false },
  // The migrate job applies prisma/migrations (lib/db/migrate.ts), so they travel with it.
  migrate: { entry: "scripts/migrate.ts", conditions: [], migrations: true },
};

// The bundle is an ES module, but some of what it bundles is CommonJS that calls require() for Node's
// own modules and reads __dirname: give them the values they would have beside the bundle.
const COMMONJS_GLOBALS = [
  'import { createRequire as __bundleCreateRequire } from "node:module";',
  'import { fileURLToPath as __bundleFileURLToPath } from "node:url";',
  "const require = __bundleCreateRequire(import.meta.url);",
  "const __filename = __bundleFileURLToPath(import.meta.url);",
  "const __dirname = __bundleFileURLToPath(new URL(\".\", import.meta.url));",
].join("\n");

const [name, out] = process.argv.slice(2);
const target = TARGETS[name];
if (!target || !out) {
  console.error("usage: node scripts/assemble-jobs.mjs <worker|migrate> <out>");
  process.exit(1);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const outfile = path.join(out, `${name}.mjs`);
const result = await build({
  entryPoints: [target.entry],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  // .nvmrc's Node (24) in the image; engines allows 22.12 and later.
  target: "node22.12",
  conditions: target.conditions,
  // The tsconfig's `@/` paths, as Next.js and tsx resolve them.
  tsconfig: "tsconfig.json",
  banner: { js: COMMONJS_GLOBALS },
  // Readable stack traces in production logs: nothing is renamed or squeezed.
  minify: false,
  keepNames: true,
  // pg's optional native binding (`new pg.native.Client`), which this app never uses and no image installs.
  external: ["pg-native"],
  legalComments: "eof",
  logLevel: "warning",
  metafile: true,
});
// A module left external would be looked up in node_modules at run time, and the image has none.
const unresolved = Object.values(result.metafile.outputs)
  .flatMap((output) => output.imports)
  .filter((entry) => entry.external && entry.path !== "pg-native" && !isBuiltin(entry.path));
if (unresolved.length > 0) {
  console.error(`assemble-jobs: ${name} would need node_modules at run time for: ${[...new Set(unresolved.map((entry) => entry.path))].join(", ")}`);
  process.exit(1);
}

if (target.migrations) {
  if (!existsSync("prisma/migrations")) throw new Error("prisma/migrations is missing");
  cpSync("prisma/migrations", path.join(out, "prisma", "migrations"), { recursive: true });
}
// Which source it came from, for whoever opens the image.
writeFileSync(path.join(out, "README"), `Bundled from ${target.entry} by scripts/assemble-jobs.mjs. Run: node ${name}.mjs\n`);
console.log(`assemble-jobs: ${out} is ready (node ${outfile})`);
