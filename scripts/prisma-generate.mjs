// Runs `prisma generate` on any machine, online or not.
//
// Why a wrapper: Prisma's postinstall downloads a native schema engine. Where that download cannot
// happen (an offline or locked-down build machine), `prisma generate` refuses to start unless
// PRISMA_SCHEMA_ENGINE_BINARY names an existing file, although generation never runs the engine.
// We point the variable at a harmless existing file only when no engine was installed, so a
// machine that has the engine keeps using it.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
let prismaBin;
try {
  prismaBin = path.join(path.dirname(require.resolve("prisma/package.json")), "build", "index.js");
} catch {
  // `npm ci --omit=dev` in a production image: the client was generated at build time.
  console.log("prisma-generate: the prisma CLI is not installed here; skipping generation.");
  process.exit(0);
}

const env = { ...process.env, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1" };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) {
  let enginesDir;
  try {
    enginesDir = path.dirname(require.resolve("@prisma/engines/package.json"));
  } catch {
    enginesDir = undefined;
  }
  const hasEngine =
    enginesDir !== undefined &&
    readdirSync(enginesDir).some((name) => name.startsWith("schema-engine"));
  if (!hasEngine) {
    // Any existing file will do: generation does not execute it.
    env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
  }
}

const result = spawnSync(process.execPath, [prismaBin, "generate"], { stdio: "inherit", env });
if (!existsSync(new URL("../lib/db/generated/client.ts", import.meta.url))) {
  console.error("prisma-generate: the client was not generated (see the output above).");
  process.exit(result.status || 1);
}
process.exit(result.status ?? 1);
