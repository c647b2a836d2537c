// The local environment: the app's configuration and the sandbox's registration of the app, from
// one set of variables, so both sides always agree (client_id, secrets, redirect_uri, scopes).
//
// `npm run dev` keeps it in a git-ignored `.env` that it writes with fresh random secrets on the
// first run; `npm test` makes a new one in memory for every run.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { hashPassword } from "../../lib/auth/password";

export type Ports = { app: number; sandbox: number };

const random = (bytes: number) => randomBytes(bytes).toString("base64url");

/** Everything the app and the sandbox need, for the given ports, with new random secrets. */
export function generateLocalEnv(ports: Ports): Record<string, string> {
  const staffEmail = "staff@example.com";
  const staffPassword = random(18);
  const appUrl = `http://localhost:${ports.app}`;
  const sandboxUrl = `http://localhost:${ports.sandbox}`;
  return {
    APP_URL: appUrl,
    NEXTAUTH_URL: appUrl,
    NEXTAUTH_SECRET: random(32),
    OAUTH_ISSUER: `${sandboxUrl}/idp`,
    OAUTH_CLIENT_ID: `partner-app-${randomBytes(4).toString("hex")}`,
    OAUTH_CLIENT_SECRET: random(32),
    OAUTH_REDIRECT_URI: `${appUrl}/oauth/callback`,
    PARTNER_API_BASE_URL: sandboxUrl,
    WEBHOOK_SECRET: random(32),
    WEBHOOK_URL: `${appUrl}/api/webhooks`,
    APP_REQUESTED_SCOPES: "charge-points:read charge-transactions:read",
    APP_NAME: "Partner App",
    OPERATOR_PORTAL_URL: `${sandboxUrl}/portal`,
    TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}`,
    STAFF_USERS: `${staffEmail}=${hashPassword(staffPassword)}`,
    // The same staff login in clear text, for `npm run dev` to print and for the tests to sign in
    // with. The app never reads these two; it knows only the hash in STAFF_USERS.
    STAFF_DEV_EMAIL: staffEmail,
    STAFF_DEV_PASSWORD: staffPassword,
    CRON_SECRET: random(32),
    SANDBOX_PORT: String(ports.sandbox),
    SANDBOX_URL: sandboxUrl,
  };
}

const HEADER = `# Local configuration for \`npm run dev\`, written on the first run with fresh random secrets.
# Git-ignored. The app and the sandbox both read it, so they always agree on the app's registration.
# Leave DATABASE_URL unset to use the embedded PostgreSQL; set it to use your own.
# Every variable is described in .env.example.
`;

/** Reads `.env`, writing a fresh one first when there is none. */
export function ensureLocalEnvFile(file: string, ports: Ports): { values: Record<string, string>; created: boolean } {
  if (!existsSync(file)) {
    const values = generateLocalEnv(ports);
    const body = Object.entries(values)
      .map(([key, value]) => `${key}=${value}`)
      .join("\n");
    writeFileSync(file, `${HEADER}\n${body}\n`, { mode: 0o600 });
    return { values, created: true };
  }
  const values = parseEnv(readFileSync(file, "utf8")) as Record<string, string>;
  return { values, created: false };
}
