// The production server's entry point: `node server.js` in the standalone folder (the runtime image,
// `npm start`, the tests). `node scripts/standalone.mjs prepare` copies this file there as server.js,
// and keeps the server.js Next.js wrote as next-server.js.
//
// Why a file in front of Next.js's own: Next.js prints "Ready in …" as soon as its server listens,
// and runs instrumentation.ts (which checks the configuration, lib/env.ts) only after that. A
// refused configuration then reads "Ready" followed by an exit, and the port answers for a moment.
// Here the check runs first: a bad configuration prints the refusal, exits 1, and never listens.
//
// Plain JavaScript, no dependency of its own: it runs in the slim runtime image too. The check is
// the app's own code, from the build (instrumentation.ts `checkConfiguration`), so there is one
// definition of a valid configuration.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The build's folder inside the standalone folder (next.config.mjs `distDir`); written by prepare. */
const DIST_DIR = "__NEXT_DIST_DIR__";

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

// As Next.js's server.js does first: the build is a production build, whatever the shell says.
process.env.NODE_ENV = "production";
// The .env files beside the server, loaded as Next.js would load them (none in the runtime image:
// scripts/assemble-runtime.sh leaves them out). Already loaded (__NEXT_PROCESSED_ENV) is left as is.
require("@next/env").loadEnvConfig(here, false);

// A fork without instrumentation.ts has nothing to check here.
const instrumentationJs = path.join(here, DIST_DIR, "server", "instrumentation.js");
if (existsSync(instrumentationJs)) await require(instrumentationJs).checkConfiguration?.();

await import("./next-server.js");
