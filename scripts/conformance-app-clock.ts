// Moves this template's clock for `npm run conformance -- --app-clock-command "npx tsx scripts/conformance-app-clock.ts"`.
//
// The conformance run moves the service's clock (the sandbox's) to make a month pass; the keep-alive check also needs
// the app to see that month, because the app decides which refresh tokens are due by its own time (lib/jobs/keep-alive.ts).
// A running Node process's clock cannot be moved from outside, so this moves what the app compares with it instead:
// every stored token expiry, CONFORMANCE_ADVANCE_SECONDS earlier. The one step of a conformance run that touches the
// app's inside; an app in another language provides its own command (or runs under libfaketime), or the check is NOT RUN.
// Never point it at a database you care about: it ages every install's tokens.
import { existsSync, readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import pg from "pg";
import { devDatabaseUrl } from "./lib/local-env";

const seconds = Number(process.env.CONFORMANCE_ADVANCE_SECONDS);
if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error("CONFORMANCE_ADVANCE_SECONDS must be a positive number of seconds");
  process.exit(2);
}
const dotenv = existsSync(".env") ? (parseEnv(readFileSync(".env", "utf8")) as Record<string, string>) : {};
// The database `npm run dev` gave the app: its name follows `npm run rename`.
const client = new pg.Client({ connectionString: devDatabaseUrl(process.env, dotenv) });
await client.connect();
try {
  const { rowCount } = await client.query(
    "UPDATE token_grants SET refresh_token_expires_at = refresh_token_expires_at - make_interval(secs => $1), access_token_expires_at = access_token_expires_at - make_interval(secs => $1)",
    [seconds],
  );
  console.log(`[conformance-app-clock] ${rowCount} grant(s) aged by ${seconds} s`);
} finally {
  await client.end();
}
