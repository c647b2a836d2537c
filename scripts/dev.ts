// npm run dev: everything a developer needs, from a fresh clone, in one command.
//   - writes .env with fresh random secrets on the first run (the app and the sandbox share it);
//   - starts PostgreSQL (embedded, unless DATABASE_URL is set) and applies the migrations;
//   - starts the sandbox (the local stand-in for the service), the app (`next dev`) and the job worker;
//   - prints where to go.
import { ensureLocalEnvFile } from "./lib/local-env";
import { stopAll } from "./lib/processes";
import { startStack } from "./lib/stack";

if (process.env.NODE_ENV === "production") {
  // The embedded database and the generated secrets are for local development only.
  console.error("npm run dev is for local development; it refuses to run with NODE_ENV=production.");
  process.exit(1);
}

const { values, created } = ensureLocalEnvFile(".env", { app: 3000, sandbox: 4010 });
if (created) console.log("[dev] wrote .env with fresh random secrets (git-ignored)");

const stack = await startStack({
  env: values,
  databaseUrl: process.env.DATABASE_URL || values.DATABASE_URL || undefined,
  dataDir: ".data/dev",
  databasePort: 54320,
  fresh: false,
  appMode: "dev",
  worker: { intervalSeconds: 15 * 60 },
}).catch((error: unknown) => {
  console.error(`[dev] could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

console.log(`
  Ready.
    Operator portal (sandbox):  ${stack.env.OPERATOR_PORTAL_URL}
    Partner app:                ${stack.env.APP_URL}
    Staff console:              ${stack.env.APP_URL}/admin  ${stack.env.STAFF_DEV_EMAIL ? `(${stack.env.STAFF_DEV_EMAIL} / ${stack.env.STAFF_DEV_PASSWORD})` : "(add STAFF_USERS to .env: npm run staff:password)"}
    Database:                   ${stack.usingEmbeddedDatabase ? "embedded PostgreSQL (.data/dev/postgres)" : "DATABASE_URL"}

  Open the portal, pick an operator, Connect the app and approve: you land on the app's dashboard.
  Press Ctrl+C to stop.
`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  console.log("\n[dev] stopping…");
  await stopAll();
  await stack.stop();
  process.exit(0);
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
