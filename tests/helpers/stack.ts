// Helpers for integration tests: they run against the stack `npm test` starts (scripts/test.ts),
// whose addresses and secrets arrive in the environment.
import pg from "pg";
import type { ApiRequestCounts } from "../../sandbox/api/counters";
import type { ArmedApiFault } from "../../sandbox/api/faults";
import type { BulkInstall } from "../../sandbox/bulk-installs";
import type { ReceivedAlert } from "../../sandbox/alert-sink";

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
/**
 * Every table of the app's schema but the migrations' bookkeeping, read from the database once: a
 * table a fork adds in a migration is emptied between tests without anyone listing it here.
 */
let appTables: Promise<string> | undefined;

export async function resetWorld(): Promise<void> {
  appTables ??= sql<{ tables: string }>(
    "SELECT string_agg(format('%I', tablename), ', ' ORDER BY tablename) AS tables FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'",
  ).then((rows) => rows[0]!.tables);
  await sql(`TRUNCATE ${await appTables} CASCADE`);
  // The job engine's jobs (its queues and schedules stay: `npm run db:migrate` made them).
  await sql("TRUNCATE pgboss.job");
  await control("POST", "/reset");
}

/**
 * Records what the app saw the identity provider do with an access token a refresh replaced
 * (lib/oauth/issuer-facts.ts, docs/spec-gaps.md A186), as its first look after a successful refresh
 * would: for a test that starts from a token the app holds as expired (the look needs one still
 * valid), or that counts one refresh's own statements. The sandbox revokes replaced tokens, as Hydra
 * does, unless its `oldAccessTokensStayValid` behaviour is on.
 */
export async function knowIssuer(oldAccessTokens: "revoked" | "kept" = "revoked"): Promise<void> {
  await sql(
    `INSERT INTO issuer_facts (issuer, old_access_tokens, observed_at) VALUES ($1, $2, now())
     ON CONFLICT (issuer) DO UPDATE SET old_access_tokens = EXCLUDED.old_access_tokens, observed_at = now(), claimed_at = NULL`,
    [required("OAUTH_ISSUER"), oldAccessTokens],
  );
}


export async function control<T = unknown>(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${stack.sandboxUrl}/_sandbox${path}`, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`sandbox control ${method} ${path}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

// ----- the app's outbound alerts, as the sandbox's alert sink received them (sandbox/README.md decisions 50-51) -----

export type { ReceivedAlert };

/** Every alert the sink received since the last reset, oldest first, with its raw body, headers and signature check. */
export async function receivedAlerts(): Promise<ReceivedAlert[]> {
  return (await control<{ alerts: ReceivedAlert[] }>("GET", "/alert-sink")).alerts;
}

/** The sink answers the next `failNext` alerts with `status` (default 503), as a receiver that is down. */
export async function setAlertSinkOutage(failNext: number, status?: number): Promise<void> {
  await control("POST", "/alert-sink/outage", status === undefined ? { failNext } : { failNext, status });
}

// ----- the partner API's rate budgets, faults and request counters (sandbox/README.md decisions 36-38) -----

/** A request budget: `limit` requests per `windowSeconds` (contract §8's default: 1,000 per 60). */
export type RateBudget = { limit: number; windowSeconds: number };

export type InstallRateLimit = RateBudget & {
  installId: number;
  /** "install": its own budget; "default": the one every install without its own has. */
  source: "default" | "install";
  /** The install's open fixed window on the sandbox clock, or null when none is open. */
  window: { startedAt: string; count: number; remaining: number; resetsInSeconds: number } | null;
};

/** Sets the budget of every install without its own (existing and future ones). `POST /_sandbox/reset` restores the configured one. */
export async function setDefaultRateLimit(budget: RateBudget): Promise<void> {
  await control("PUT", "/rate-limit", budget);
}

/** Gives one install its own budget; it applies at once, to the window already open. */
export function setRateLimit(installId: number, budget: RateBudget): Promise<InstallRateLimit> {
  return control<InstallRateLimit>("PUT", `/installs/${installId}/rate-limit`, budget);
}

export function rateLimitOf(installId: number): Promise<InstallRateLimit> {
  return control<InstallRateLimit>("GET", `/installs/${installId}/rate-limit`);
}

/** The install goes back to the default budget. */
export function clearRateLimit(installId: number): Promise<InstallRateLimit> {
  return control<InstallRateLimit>("DELETE", `/installs/${installId}/rate-limit`);
}

/**
 * A fault on API routes under /api/v1 (`path` exactly or as a prefix at "/"; "/" is every route), for `forMs` of wall-clock
 * time and/or `count` requests. It answers after the token check and before the limiter: a faulted request does not
 * spend the budget. `rate-limited` needs `forMs` unless `resetsIn` is "omit" (a 429 without RateLimit-ResetsIn).
 */
export type ApiFaultRequest = {
  path: string;
  mode: "rate-limited" | "error500" | "error503" | "latency" | "timeout";
  forMs?: number;
  count?: number;
  /** latency: the wait before the request is processed (default 1000). */
  latencyMs?: number;
  /** timeout: how long the request is held before its connection is dropped (default and maximum 120000). */
  holdMs?: number;
  /** Only this install's requests. */
  installId?: number;
  /** A number is sent as RateLimit-ResetsIn as it is (an implausible wait the app must cap). */
  resetsIn?: "send" | "omit" | number;
};

/** One armed fault, as GET /_sandbox/api-faults shows it (sandbox/api/faults.ts). */
export type { ArmedApiFault };

export async function armApiFault(fault: ApiFaultRequest): Promise<ArmedApiFault> {
  return (await control<{ armed: ArmedApiFault }>("POST", "/api-faults", fault)).armed;
}

/** The faults still armed, and how many requests a latency or timeout fault is holding right now. */
export function apiFaults(): Promise<{ faults: ArmedApiFault[]; held: number }> {
  return control("GET", "/api-faults");
}

export async function clearApiFaults(): Promise<void> {
  await control("DELETE", "/api-faults");
}

/** What the sandbox counts per install (sandbox/api/counters.ts; README decision 38). */
export type { ApiRequestCounts };

/** The install's request counts; `windowSeconds` sets the span of peakInAnyWindow (default: the install's window). */
export function apiRequestCounts(installId: number, options: { windowSeconds?: number } = {}): Promise<ApiRequestCounts> {
  const query = options.windowSeconds === undefined ? "" : `?windowSeconds=${options.windowSeconds}`;
  return control<ApiRequestCounts>("GET", `/installs/${installId}/api-requests${query}`);
}

/** Starts the install's counts from zero (between phases of a test); its budget and open window are untouched. */
export async function clearApiRequestCounts(installId: number): Promise<void> {
  await control("DELETE", `/installs/${installId}/api-requests`);
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

/**
 * A complete install through the portal and the app's redirect_uri; returns the app's row id.
 * `clientAddress` plays another browser's address (X-Forwarded-For), for tests that install more
 * often than the redirect_uri's per-address limit allows (CALLBACK_REQUESTS_PER_MINUTE).
 */
export async function installViaPortal(
  operatorId: number,
  options: { clientAddress?: string } = {},
): Promise<{ installRowId: string; installId: number; sessionCookie: string }> {
  const callback = await approveInPortal(operatorId);
  const response = await fetch(callback, { redirect: "manual", headers: options.clientAddress ? { "X-Forwarded-For": options.clientAddress } : {} });
  if (response.status !== 303 || !response.headers.get("location")?.endsWith("/dashboard")) {
    throw new Error(`the install did not complete: ${response.status} ${response.headers.get("location")}`);
  }
  const [row] = await sql<{ id: string; install_id: number }>(
    "SELECT id, install_id FROM installs WHERE operator_id = $1 AND status <> 'REVOKED' ORDER BY created_at DESC LIMIT 1",
    [String(operatorId)],
  );
  return { installRowId: row!.id, installId: row!.install_id, sessionCookie: response.headers.get("set-cookie")!.split(";")[0]! };
}

/** Token-endpoint calls the sandbox saw, per grant type, optionally for one install. */
export async function tokenCalls(installId?: number): Promise<{ authorization_code: number; refresh_token: number; events: SandboxEvent[] }> {
  const events = (await sandboxEvents("token")).filter((e) => installId === undefined || e.detail.install_id === installId);
  const count = (type: string) => events.filter((e) => e.detail.grant_type === type).length;
  return { authorization_code: count("authorization_code"), refresh_token: count("refresh_token"), events };
}

/** Makes the app believe the install's access token expired (and, with `atService`, the sandbox too). */
export async function expireAccessToken(installRowId: string, atService: boolean): Promise<void> {
  await sql("UPDATE token_grants SET access_token_expires_at = now() - interval '1 minute' WHERE install_row_id = $1", [installRowId]);
  if (atService) await control("POST", "/clock/advance", { seconds: 3601 });
}

// ----- the sandbox at scale: bulk installs, the large operator, live data, record edits, persistence -----
// (sandbox/README.md decisions 40-44)

/** The large seeded operator: 500 charge points, 20,000 charges (built by the sandbox on first use). */
export const LARGE_OPERATOR_ID = 2001;

/** One install the sandbox made in bulk, with its tokens (sandbox/bulk-installs.ts). */
export type { BulkInstall };

/**
 * Creates `count` (≤ 20,000) new operators, each with an active install of the app and a fresh token pair, as if
 * each had gone through the portal and the app's redirect_uri. The app has none of them until the test stores them.
 * `scopes`: data scopes, a subset of the app's requested ones (default: all of them); `charges`: per operator (default
 * 2); `webhooks`: send install.created for each (default false).
 */
export async function bulkInstalls(options: { count: number; scopes?: string[]; charges?: number; webhooks?: boolean }): Promise<BulkInstall[]> {
  return (await control<{ installs: BulkInstall[] }>("POST", "/bulk-installs", options)).installs;
}

export type RecordKind = "charge-points" | "charges" | "teams";

/** The operator's whole list as the API shows it now (seed, live data, edits), in id order. */
export function operatorRecords<T = Record<string, unknown> & { id: number }>(operatorId: number, kind: RecordKind): Promise<{ operatorId: number; total: number; data: T[] }> {
  return control("GET", `/operators/${operatorId}/${kind}`);
}

/** The record is no longer listed by the API (for deletion detection). */
export async function deleteSandboxRecord(operatorId: number, kind: RecordKind, recordId: number): Promise<void> {
  await control("DELETE", `/operators/${operatorId}/${kind}/${recordId}`);
}

/** A deleted record is listed again, as it was. */
export async function restoreSandboxRecord(operatorId: number, kind: RecordKind, recordId: number): Promise<void> {
  await control("POST", `/operators/${operatorId}/${kind}/${recordId}/restore`);
}

/**
 * Changes fields of a listed record; charge points and teams get updatedAt = the sandbox clock's now. Charge points:
 * name, state, visibility, isActive; charges: state, consumedKwh, stopReason; teams: name, type.
 */
export async function changeSandboxRecord<T = Record<string, unknown>>(operatorId: number, kind: RecordKind, recordId: number, fields: Record<string, string | number | boolean | null>): Promise<T> {
  return (await control<{ record: T }>("PATCH", `/operators/${operatorId}/${kind}/${recordId}`, fields)).record;
}

export type LiveData = {
  enabled: boolean;
  chargesPerHour: number;
  /** When the hour slots start (sandbox clock): slot k shows once anchor + (k + 1) h has passed. */
  anchor: string;
  slotHours: number;
  slotsElapsed: number;
  configured: { enabled: boolean; chargesPerHour: number };
};

/** Whether the operators' data moves with the clock. The test stack starts with it off; resetWorld() turns it off again. */
export function liveData(): Promise<LiveData> {
  return control<LiveData>("GET", "/live-data");
}

/**
 * Switches live data on (anchored at the sandbox clock's now: each whole hour the clock moves after this brings every
 * operator `chargesPerHour` new charges, default 2) or off (back to the seed's lists).
 */
export function setLiveData(setting: { enabled: boolean; chargesPerHour?: number }): Promise<LiveData> {
  return control<LiveData>("POST", "/live-data", setting);
}

export type SandboxPersistence = { snapshotBytes: number; journalBytes: number; generation: number; bytesWritten: number; journalAppends: number; compactions: number };

/** How much the sandbox's store has written (after writing what is pending): count bytes, not time. */
export function sandboxPersistence(): Promise<SandboxPersistence> {
  return control<SandboxPersistence>("GET", "/persistence?flush=1");
}

// ----- the EVSE charge-history beta per operator (sandbox/README.md decision 47) -----

export type EnergyBeta = { operatorId: number; enabled: boolean; shape: "current" | "changed"; changedAt: string | null };

/** Switches the operator's EVSE charge-history beta (off by default; a reset turns it off). "changed": a later beta's answer shape. */
export function setEnergyBeta(operatorId: number, setting: { enabled: boolean; shape?: "current" | "changed" }): Promise<EnergyBeta> {
  return control<EnergyBeta>("PUT", `/operators/${operatorId}/energy-beta`, setting);
}

/** Installs stored per INSERT statement by storeBulkInstalls: 10,000 take five round trips per table. */
const BULK_STORE_CHUNK = 2_000;

/**
 * Stores installs the sandbox made in bulk straight into the app's database, as the redirect_uri would
 * have stored each one (lib/installs/connect.ts): an ACTIVE install with its granted scopes, the
 * "install recorded" event, and a token grant sealed with the app's own sealing function and keys
 * (lib/oauth/token-crypto.ts, TOKEN_ENCRYPTION_KEYS, bound to the install's row id), so the app
 * refreshes and uses these tokens like any other. One multi-row INSERT per table per 2,000 installs,
 * instead of 10,000 callbacks. Returns the installs' row ids, in the order given.
 * `issuedAt`: when the tokens were issued (the expiries count from it, as at the redirect_uri).
 */
export async function storeBulkInstalls(installs: BulkInstall[], issuedAt = new Date()): Promise<string[]> {
  // Imported here, not at the top: only the scale tests and the bench need the app's own modules.
  const { env } = await import("../../lib/env");
  const { sealToken } = await import("../../lib/oauth/token-crypto");
  const { REFRESH_TOKEN_LIFETIME_MS } = await import("../../lib/oauth/token-vault");
  const { randomUUID } = await import("node:crypto");
  const keys = env().TOKEN_ENCRYPTION_KEYS;
  const rowIds: string[] = [];
  for (let i = 0; i < installs.length; i += BULK_STORE_CHUNK) {
    const chunk = installs.slice(i, i + BULK_STORE_CHUNK);
    const ids = chunk.map(() => randomUUID());
    rowIds.push(...ids);
    // Scopes as one space-separated string per row (a text[][] parameter must be rectangular).
    await sql(
      `INSERT INTO installs (id, install_id, client_id, operator_id, granted_scopes, status, updated_at)
       SELECT id, install_id, $4, operator_id, string_to_array(scope, ' '), 'ACTIVE', now()
       FROM unnest($1::uuid[], $2::int[], $3::text[], $5::text[]) AS t(id, install_id, operator_id, scope)`,
      [ids, chunk.map((b) => b.installId), chunk.map((b) => String(b.operatorId)), process.env.OAUTH_CLIENT_ID, chunk.map((b) => b.scope)],
    );
    await sql(
      `INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail)
       SELECT gen_random_uuid(), id, NULL, 'ACTIVE', 'callback', 'install recorded' FROM unnest($1::uuid[]) AS t(id)`,
      [ids],
    );
    await sql(
      `INSERT INTO token_grants (id, install_row_id, access_token_encrypted, refresh_token_encrypted, access_token_expires_at, refresh_token_expires_at, scope, updated_at)
       SELECT gen_random_uuid(), id, access_sealed, refresh_sealed, $4::timestamptz + make_interval(secs => expires_in), $5::timestamptz, scope, now()
       FROM unnest($1::uuid[], $2::text[], $3::text[], $6::int[], $7::text[]) AS t(id, access_sealed, refresh_sealed, expires_in, scope)`,
      [
        ids,
        chunk.map((b, n) => sealToken(b.access_token, ids[n]!, keys)),
        chunk.map((b, n) => sealToken(b.refresh_token, ids[n]!, keys)),
        issuedAt,
        new Date(issuedAt.getTime() + REFRESH_TOKEN_LIFETIME_MS),
        chunk.map((b) => b.expires_in),
        chunk.map((b) => b.scope),
      ],
    );
  }
  return rowIds;
}
