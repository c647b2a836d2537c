// npm run conformance: a black-box run of the contract's obligations against a running partner app, with the sandbox
// playing the service (conformance/, docs/conformance.md). It knows the app only by its addresses: the redirect_uri
// and webhook URL the sandbox was started with, a page that makes an API call as the operator, and, if given, the
// cron routes that start its scheduled work. Prints one line per check, then a table; writes the same as JSON and
// JUnit XML; exits 0 only when every check passed (checks left out with --skip/--only excepted).
//
//   npm run conformance                                   # this template under `npm run dev` (addresses, cron secret and
//                                                         # the defaults of the three options below from .env and this repo)
//   npm run conformance -- --app http://localhost:8080 --page /account/stations --sandbox http://localhost:4010
//
// Options (each also read from the environment named, then from .env, for this template's defaults):
//   --sandbox <url>               the sandbox (SANDBOX_URL; default http://localhost:4010)
//   --app <url>                   the app's origin (APP_URL; default http://localhost:3000)
//   --page <path or url>          a page that makes an API call as the signed-in operator (default /dashboard/charge-points)
//   --keep-alive-url <path|url>   the app's keep-alive run (this template: /api/cron/keep-alive); without it, NOT RUN
//   --jobs-url <path|url>         other scheduled work to fire during the burst and after an uninstall (repeatable)
//   --cron-secret <secret>        sent as Authorization: Bearer to those URLs (CRON_SECRET)
//   --app-clock-command <cmd>     moves the app's clock: run with CONFORMANCE_ADVANCE_SECONDS=<n> (this template:
//                                 "npx tsx scripts/conformance-app-clock.ts"); without it, keep-alive is NOT RUN
//   --operators 1001,1002         operators to install with (default: every one without an active install)
//   --skip <ids>  --only <ids>    check ids or groups (install, tokens, webhooks, reauth, rate, uninstall), comma separated
//   --json <file>  --junit <file> where to write the report (default .data/conformance/report.json and junit.xml)
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs, parseEnv } from "node:util";
import { json, junit, table } from "../conformance/report";
import { runConformance } from "../conformance/run";
import type { ConformanceTarget } from "../conformance/types";

const { values } = parseArgs({
  options: {
    sandbox: { type: "string" },
    app: { type: "string" },
    page: { type: "string" },
    "keep-alive-url": { type: "string" },
    "jobs-url": { type: "string", multiple: true },
    "cron-secret": { type: "string" },
    "app-clock-command": { type: "string" },
    operators: { type: "string" },
    skip: { type: "string" },
    only: { type: "string" },
    json: { type: "string", default: ".data/conformance/report.json" },
    junit: { type: "string", default: ".data/conformance/junit.xml" },
    help: { type: "boolean", short: "h" },
  },
});

if (values.help) {
  console.log(readFileSync(new URL(import.meta.url), "utf8").split("\n").filter((line) => line.startsWith("//")).map((line) => line.slice(3)).join("\n"));
  process.exit(0);
}

// This template's .env holds its addresses and its cron secret; any other app passes them as options.
const dotenv = existsSync(".env") ? (parseEnv(readFileSync(".env", "utf8")) as Record<string, string>) : {};
const setting = (name: string) => process.env[name] || dotenv[name] || undefined;
const appUrl = (values.app ?? setting("APP_URL") ?? "http://localhost:3000").replace(/\/$/, "");
const sandboxUrl = (values.sandbox ?? setting("SANDBOX_URL") ?? "http://localhost:4010").replace(/\/$/, "");
const onApp = (where: string) => (/^https?:\/\//.test(where) ? where : `${appUrl}${where.startsWith("/") ? "" : "/"}${where}`);
const cronSecret = values["cron-secret"] ?? setting("CRON_SECRET");
const list = (value: string | undefined) => value?.split(",").map((item) => item.trim()).filter(Boolean);
// Judging this template (no --app, its .env here): its own cron routes and clock command, unless told otherwise.
// Any other app names its own, or the checks that need them are NOT RUN.
const thisTemplate = values.app === undefined && existsSync(".env");
const keepAliveUrl = values["keep-alive-url"] ?? (thisTemplate ? "/api/cron/keep-alive" : undefined);
const jobsUrls = values["jobs-url"] ?? (thisTemplate ? ["/api/cron/sync"] : []);
const clockCommand = values["app-clock-command"] ?? (thisTemplate ? "npx tsx scripts/conformance-app-clock.ts" : undefined);

const target: ConformanceTarget = {
  sandboxUrl,
  pageUrl: onApp(values.page ?? "/dashboard/charge-points"),
  keepAlive: keepAliveUrl ? { url: onApp(keepAliveUrl), secret: cronSecret } : undefined,
  jobs: jobsUrls.map((url) => ({ url: onApp(url), secret: cronSecret })),
  advanceAppClock: clockCommand
    ? (seconds) =>
        new Promise<void>((resolve, reject) => {
          execFile("/bin/sh", ["-c", clockCommand], { env: { ...process.env, CONFORMANCE_ADVANCE_SECONDS: String(seconds) } }, (error, _stdout, stderr) =>
            error ? reject(new Error(`--app-clock-command failed: ${stderr.trim() || error.message}`)) : resolve(),
          );
        })
    : undefined,
  operatorIds: list(values.operators)?.map(Number),
  skip: list(values.skip),
  only: list(values.only),
};

// Both ends must be up before anything is judged: a check that fails because nothing listens proves nothing.
for (const [name, url] of [["sandbox", `${sandboxUrl}/_sandbox/health`], ["app", target.pageUrl]] as const) {
  try {
    await (await fetch(url, { redirect: "manual" })).body?.cancel();
  } catch {
    console.error(`[conformance] the ${name} does not answer at ${url}: start it first (this template: npm run dev)`);
    process.exit(2);
  }
}

console.log(`[conformance] judging the app behind ${target.pageUrl} against the sandbox at ${sandboxUrl}`);
const report = await runConformance(target, { progress: (line) => console.log(line) });
console.log(`\n${table(report)}`);
for (const [file, text] of [
  [values.json, json(report)],
  [values.junit, junit(report)],
] as const) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}
console.log(`[conformance] report: ${values.json}, ${values.junit}`);
process.exit(report.passed ? 0 : 1);
