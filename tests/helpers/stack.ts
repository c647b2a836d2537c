// Helpers for integration tests: they run against the stack `npm test` starts (scripts/test.ts),
// whose addresses and secrets arrive in the environment.
import pg from "pg";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the integration tests through \`npm test\``);
  return value;
}

export const stack = {
  get appUrl() {
    return required("APP_URL");
  },
  get sandboxUrl() {
    return required("SANDBOX_URL");
  },
  get webhookSecret() {
    return required("WEBHOOK_SECRET");
  },
  get databaseUrl() {
    return required("DATABASE_URL");
  },
};

let pool: pg.Pool | undefined;

/** Raw SQL against the app's database: tests read rows exactly as stored. */
export async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  pool ??= new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
  return (await pool.query<T>(text, values)).rows;
}

export async function closeSql(): Promise<void> {
  await pool?.end();
  pool = undefined;
}

/** Empties the app's tables (not the migrations bookkeeping) and resets the sandbox. */
export async function resetWorld(): Promise<void> {
  await sql("TRUNCATE installs, token_grants, install_events, webhook_deliveries CASCADE");
  await control("POST", "/reset");
}

export async function control<T = unknown>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${stack.sandboxUrl}/_sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`sandbox control ${method} ${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

export type SandboxEvent = { seq: number; type: string; at: string; detail: Record<string, unknown> };

export async function sandboxEvents(type?: string): Promise<SandboxEvent[]> {
  const { events } = await control<{ events: SandboxEvent[] }>("GET", `/events${type ? `?type=${type}` : ""}`);
  return events;
}

function locationOf(response: Response): string {
  const location = response.headers.get("location");
  if (!location) throw new Error(`expected a redirect, got HTTP ${response.status}`);
  return new URL(location, response.url || stack.sandboxUrl).toString();
}

/**
 * The operator's side of the install, as a browser would walk it: portal → Connect → the
 * identity provider → consent → Approve. Returns the app's redirect_uri with the code, unvisited.
 */
export async function approveInPortal(operatorId: number, decision: "approve" | "deny" = "approve"): Promise<URL> {
  const post = (url: string, fields: Record<string, string>) =>
    fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    });
  const authorizeUrl = locationOf(await post(`${stack.sandboxUrl}/portal/operators/${operatorId}/connect`, {}));
  const consentUrl = locationOf(await fetch(authorizeUrl, { redirect: "manual" }));
  const html = await (await fetch(consentUrl)).text();
  const challenge = /name="consent_challenge" value="([^"]+)"/.exec(html)?.[1];
  if (!challenge) throw new Error("the consent page has no consent_challenge");
  return new URL(locationOf(await post(`${stack.sandboxUrl}/idp/consent`, { consent_challenge: challenge, decision })));
}
