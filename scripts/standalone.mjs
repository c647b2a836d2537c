// The production server as the container image runs it (next.config.mjs `output: "standalone"`).
//
//   node scripts/standalone.mjs prepare   after `next build`: copy the static files beside the server,
//                                         and put the configuration check in front of it (server.js)
//   node scripts/standalone.mjs start     run the standalone server (PORT, HOSTNAME from the environment)
//
// `next build` writes a self-contained server to <distDir>/standalone (with only the node_modules it
// needs) but leaves the static files out, by design; the Dockerfile copies them in the same way.
// Plain JavaScript, no dependency: it runs in the slim runtime image too.
import { cpSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const distDir = process.env.NEXT_DIST_DIR || ".next";

/** Marks the server.js this script writes, so that preparing twice keeps Next.js's own. */
const ENTRY_MARKER = "// The production server's entry point";

/**
 * Copies <distDir>/static into the standalone folder, and puts scripts/standalone-server.mjs in front
 * of Next.js's server (which becomes next-server.js), so the configuration is checked before Next.js
 * listens and prints "Ready". Returns the server's entry point. Safe to run again.
 */
export function prepareStandalone(dir = distDir) {
  const standalone = path.resolve(dir, "standalone");
  const entry = path.join(standalone, "server.js");
  if (!existsSync(entry)) {
    throw new Error(`${standalone}/server.js is missing: run \`npm run build\` first`);
  }
  cpSync(path.resolve(dir, "static"), path.join(standalone, dir, "static"), { recursive: true });
  if (!readFileSync(entry, "utf8").startsWith(ENTRY_MARKER)) renameSync(entry, path.join(standalone, "next-server.js"));
  const template = readFileSync(new URL("./standalone-server.mjs", import.meta.url), "utf8");
  writeFileSync(entry, template.replace('"__NEXT_DIST_DIR__"', JSON.stringify(path.normalize(dir))));
  return entry;
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
