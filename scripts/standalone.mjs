// The production server as the container image runs it (next.config.mjs `output: "standalone"`).
//
//   node scripts/standalone.mjs prepare   after `next build`: copy the static files beside the server
//   node scripts/standalone.mjs start     run the standalone server (PORT, HOSTNAME from the environment)
//
// `next build` writes a self-contained server to <distDir>/standalone (with only the node_modules it
// needs) but leaves the static files out, by design; the Dockerfile copies them in the same way.
// Plain JavaScript, no dependency: it runs in the slim runtime image too.
import { cpSync, existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const distDir = process.env.NEXT_DIST_DIR || ".next";

/** Copies <distDir>/static into the standalone folder; returns the server's entry point. */
export function prepareStandalone(dir = distDir) {
  const standalone = path.resolve(dir, "standalone");
  if (!existsSync(path.join(standalone, "server.js"))) {
    throw new Error(`${standalone}/server.js is missing: run \`npm run build\` first`);
  }
  cpSync(path.resolve(dir, "static"), path.join(standalone, dir, "static"), { recursive: true });
  return path.join(standalone, "server.js");
}

const command = process.argv[2];
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (command === "prepare") {
    prepareStandalone();
  } else if (command === "start") {
    await import(pathToFileURL(prepareStandalone()).href);
  } else {
    console.error("usage: node scripts/standalone.mjs prepare|start");
    process.exit(2);
  }
}
