// The local environment: the app's configuration and the sandbox's registration of the app, from
// one set of variables, so both sides always agree (client_id, secrets, redirect_uri, scopes).
//
// `npm run dev` keeps it in a git-ignored `.env` that it writes with fresh random secrets on the
// first run; `npm test` makes a new one in memory for every run.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { hashPassword, type ScryptParams } from "../../lib/auth/password";
import { PRODUCT } from "../../lib/config/product";

export type Ports = { app: number; sandbox: number };

const random = (bytes: number) => randomBytes(bytes).toString("base64url");

/** The addresses that follow from the app's and the sandbox's ports (all on localhost). */
function localAddresses(ports: Ports): Record<string, string> {
  const appUrl = `http://localhost:${ports.app}`;
  const sandboxUrl = `http://localhost:${ports.sandbox}`;
  return {
    APP_URL: appUrl,
    NEXTAUTH_URL: appUrl,
    OAUTH_REDIRECT_URI: `${appUrl}/oauth/callback`,
    WEBHOOK_URL: `${appUrl}/api/webhooks`,
    OAUTH_ISSUER: `${sandboxUrl}/idp`,
    PARTNER_API_BASE_URL: sandboxUrl,
    OPERATOR_PORTAL_URL: `${sandboxUrl}/portal`,
    SANDBOX_PORT: String(ports.sandbox),
    SANDBOX_URL: sandboxUrl,
    // The app's alerts go to the sandbox's alert sink (sandbox/README.md decision 50), shown on its /console.
    ALERT_WEBHOOK_URL: `${sandboxUrl}/_sandbox/alert-sink`,
  };
}

/** A Standard Webhooks secret for the app's alerts: `whsec_` and 32 random bytes. */
const alertSecret = () => `whsec_${randomBytes(32).toString("base64")}`;

/**
 * Everything the app and the sandbox need, for the given ports, with new random secrets.
 * `passwordHash`: the staff hashes' scrypt cost (the production default unless given).
 */
export function generateLocalEnv(ports: Ports, { passwordHash }: { passwordHash?: ScryptParams } = {}): Record<string, string> {
  const staffEmail = "staff@example.com";
  const staffPassword = random(18);
  // A second account with the read-only role (lib/auth/staff-accounts.ts), to try the console as a viewer.
  const viewerEmail = "viewer@example.com";
  const viewerPassword = random(18);
  return {
    ...localAddresses(ports),
    NEXTAUTH_SECRET: random(32),
    OAUTH_CLIENT_ID: `${PRODUCT.localClientIdPrefix}-${randomBytes(4).toString("hex")}`,
    OAUTH_CLIENT_SECRET: random(32),
    WEBHOOK_SECRET: random(32),
    APP_REQUESTED_SCOPES: "charge-points:read charge-transactions:read",
    // The name the service shows operators on its consent screen: the product's (lib/config/product.ts).
    APP_NAME: PRODUCT.displayName,
    TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}`,
    STAFF_USERS: `${staffEmail}=${hashPassword(staffPassword, passwordHash)},${viewerEmail}=${hashPassword(viewerPassword, passwordHash)}=viewer`,
    // The same staff logins in clear text, for `npm run dev` to print and for the tests to sign in
    // with. The app never reads these; it knows only the hashes in STAFF_USERS.
    STAFF_DEV_EMAIL: staffEmail,
    STAFF_DEV_PASSWORD: staffPassword,
    STAFF_VIEWER_DEV_EMAIL: viewerEmail,
    STAFF_VIEWER_DEV_PASSWORD: viewerPassword,
    CRON_SECRET: random(32),
    // The sandbox reads it too, to check each alert's signature.
    ALERT_WEBHOOK_SECRET: alertSecret(),
  };
}

const HEADER = `# Local configuration for \`npm run dev\`, written on the first run with fresh random secrets.
# Git-ignored. The app and the sandbox both read it, so they always agree on the app's registration.
# Leave DATABASE_URL unset to use the embedded PostgreSQL; set it to use your own.
# Every variable is described in .env.example.
`;

export type DevPorts = Ports & { database: number };

export const DEFAULT_DEV_PORTS: DevPorts = { app: 3000, sandbox: 4010, database: 54320 };

const PORT_VARIABLES = { app: "PORT", sandbox: "SANDBOX_PORT", database: "DATABASE_PORT" } as const;

/**
 * `npm run dev`'s ports: PORT (the app), SANDBOX_PORT and DATABASE_PORT, from the shell first, then
 * from `.env`, else the defaults. A value that is not a port is an error, named.
 */
export function devPorts(shell: Record<string, string | undefined>, file: Record<string, string>): DevPorts {
  const ports = { ...DEFAULT_DEV_PORTS };
  for (const [key, name] of Object.entries(PORT_VARIABLES) as [keyof DevPorts, string][]) {
    const raw = shell[name] ?? file[name];
    if (raw === undefined || raw === "") continue;
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${name}=${raw} is not a port (1-65535)`);
    ports[key] = port;
  }
  return ports;
}

/** The embedded PostgreSQL's fixed login (scripts/lib/embedded-db.ts): it listens on localhost only; never reuse it. */
export const EMBEDDED_DATABASE_LOGIN = { user: "postgres", password: "postgres" } as const;

export function embeddedDatabaseUrl(port: number, database: string): string {
  return `postgresql://${EMBEDDED_DATABASE_LOGIN.user}:${EMBEDDED_DATABASE_LOGIN.password}@localhost:${port}/${encodeURIComponent(database)}`;
}

/**
 * The database `npm run dev` gives the app: DATABASE_URL from the shell, then from `.env`, else the embedded one on
 * DATABASE_PORT, named after the product (scripts/lib/stack.ts), so that it follows `npm run rename`.
 */
export function devDatabaseUrl(shell: Record<string, string | undefined>, file: Record<string, string>): string {
  return shell.DATABASE_URL || file.DATABASE_URL || embeddedDatabaseUrl(devPorts(shell, file).database, PRODUCT.databaseName);
}

function writeEnvFile(file: string, values: Record<string, string>): void {
  const body = Object.entries(values)
    .map(([key, value]) => `${key}=${value}`)
    .join("\n");
  writeFileSync(file, `${HEADER}\n${body}\n`, { mode: 0o600 });
}

/**
 * Reads `.env`, writing a fresh one first when there is none. The ports are kept in it (PORT,
 * SANDBOX_PORT, DATABASE_PORT); when they change, the local addresses that follow from them are
 * rewritten too, and every secret is kept.
 */
export function ensureLocalEnvFile(file: string, ports: DevPorts): { values: Record<string, string>; created: boolean } {
  const portValues = { PORT: String(ports.app), SANDBOX_PORT: String(ports.sandbox), DATABASE_PORT: String(ports.database) };
  if (!existsSync(file)) {
    const values = { ...portValues, ...generateLocalEnv(ports) };
    writeEnvFile(file, values);
    return { values, created: true };
  }
  const current = parseEnv(readFileSync(file, "utf8")) as Record<string, string>;
  // An address the developer pointed elsewhere (e.g. a tunnel's https URL for APP_URL) is theirs.
  const addresses = Object.fromEntries(
    Object.entries(localAddresses(ports)).filter(([key]) => !current[key] || !/^https?:\/\//.test(current[key]) || new URL(current[key]).hostname === "localhost"),
  );
  const values: Record<string, string> = { ...current, ...portValues, ...addresses };
  // A `.env` written before alerts existed gets the sink's address above; its secret too, or the app refuses half a configuration.
  if (values.ALERT_WEBHOOK_URL && !values.ALERT_WEBHOOK_SECRET) values.ALERT_WEBHOOK_SECRET = alertSecret();
  if (Object.entries(values).some(([key, value]) => current[key] !== value)) writeEnvFile(file, values);
  return { values, created: false };
}
