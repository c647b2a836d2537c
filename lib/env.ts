// The only module that reads process.env. Everything else imports `env()` from here.
//
// Values are validated with zod the first time they are needed, and a bad or missing value stops
// the process with one message that names every problem, instead of failing later in a request.
// Reading lazily (not at import time) lets `next build` import routes without a configured env.
import "server-only";
import { z } from "zod";
import { parseStaffUsers } from "@/lib/config/staff-users";

const urlString = z.url({ protocol: /^https?$/ });

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Comma-separated origins (`https://host[:port]`, plain http for loopback only), normalised by URL. */
export const OriginListSchema = z.string().transform((value, ctx) => {
  const origins: string[] = [];
  for (const entry of value.split(",").map((s) => s.trim()).filter(Boolean)) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    const secure = url && (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)));
    if (!url || !secure || url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
      ctx.addIssue({ code: "custom", message: `"${entry}" is not an origin: write it as https://host[:port] (http only for localhost)` });
      return z.NEVER;
    }
    origins.push(url.origin);
  }
  if (origins.length === 0) {
    ctx.addIssue({ code: "custom", message: "list at least one origin, or leave it unset for the default" });
    return z.NEVER;
  }
  return origins;
});

/** `id:base64key[,id:base64key...]`; the first entry encrypts, all of them decrypt. */
const encryptionKeysSchema = z
  .string()
  .min(1)
  .transform((value, ctx) => {
    const keys: { id: string; key: Buffer }[] = [];
    for (const entry of value.split(",").map((s) => s.trim()).filter(Boolean)) {
      const [id, material, extra] = entry.split(":");
      const key = material ? Buffer.from(material, "base64") : Buffer.alloc(0);
      if (!id || !/^[A-Za-z0-9_-]{1,32}$/.test(id) || extra !== undefined || key.length !== 32) {
        ctx.addIssue({
          code: "custom",
          message: "each entry must be `<key id>:<32 bytes, base64>` (generate one with `openssl rand -base64 32`)",
        });
        return z.NEVER;
      }
      keys.push({ id, key });
    }
    if (keys.length === 0) {
      ctx.addIssue({ code: "custom", message: "at least one key is required" });
      return z.NEVER;
    }
    if (new Set(keys.map((k) => k.id)).size !== keys.length) {
      ctx.addIssue({ code: "custom", message: "key ids must be unique" });
      return z.NEVER;
    }
    return keys;
  });

/**
 * The issuer exactly as the identity provider names itself. Discovery (RFC 8414 §3.3, OpenID
 * Discovery §4.3) requires the document's `issuer` to equal this address, and an issuer with a path
 * never ends in a slash, so `https://idp.example.com/oauth/` can never match and every token request
 * would fail at discovery. Refused here, with the fix in the message, rather than silently
 * normalised: the value is copied from what the service gave, and a wrong copy is worth knowing about.
 */
export const oauthIssuerSchema = urlString.refine((value) => {
  // zod runs refinements after a failed format check too; that failure is already reported.
  if (!URL.canParse(value)) return true;
  const { pathname } = new URL(value);
  return pathname === "/" || !pathname.endsWith("/");
}, "must not end with a slash after a path (e.g. https://idp.example.com/oauth, not https://idp.example.com/oauth/): discovery compares it with the issuer exactly");

/**
 * The partner API's origin: contract §4 puts every path under /api/v1 at {base_url}, and
 * lib/partner-api/client.ts resolves "/api/v1/…" against this value, which drops any path it has.
 * A path here would be ignored without a word, so it is refused instead (docs/going-live.md).
 */
export const partnerApiBaseUrlSchema = urlString.refine((value) => !URL.canParse(value) || new URL(value).pathname === "/", {
  message: "must be the API's origin only (e.g. https://api.example.com): the app adds /api/v1 itself, and a path here would be ignored",
});

const EnvSchema = z.object({
  NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),

  /**
   * OpenTelemetry export (lib/telemetry/setup.ts), the standard variables of the OTLP exporter
   * specification. Unset: nothing is exported and the SDK is not even started. The SDK reads the
   * others itself (OTEL_EXPORTER_OTLP_HEADERS, OTEL_METRIC_EXPORT_INTERVAL, OTEL_BSP_*, OTEL_SDK_DISABLED...);
   * these are checked here so that a misspelt endpoint stops the process at start, not silently.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: urlString.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: urlString.optional(),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: urlString.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(["http/protobuf", "http/json", "grpc"]).optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(["http/protobuf", "http/json", "grpc"]).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),

  /** The app's public origin, e.g. https://partner.example.com */
  APP_URL: urlString,
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL"),
  /** Connections per app instance. Mind the database's max_connections across all instances. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),

  /** next-auth signs and encrypts session cookies with this. */
  NEXTAUTH_SECRET: z.string().min(32, "use at least 32 random characters"),

  /** contract §5.8: the issuer address is given to app owners on request. */
  OAUTH_ISSUER: oauthIssuerSchema,
  OAUTH_CLIENT_ID: z.string().min(1),
  OAUTH_CLIENT_SECRET: z.string().min(1),
  /** contract §5.3: registered by exact match; sent unchanged in the token request. */
  OAUTH_REDIRECT_URI: urlString,
  /** The partner API origin; paths are under /api/v1 (contract §9). */
  PARTNER_API_BASE_URL: partnerApiBaseUrlSchema,
  /** contract §6: key for webhook signatures. */
  WEBHOOK_SECRET: z.string().min(16),
  /** The secret being rotated out: accepted too while a rotation is under way. */
  WEBHOOK_PREVIOUS_SECRET: z.string().min(16).optional(),
  /** contract §6.4: how far `delivered_at` may be from now, each way (window not shown; 5 minutes). */
  WEBHOOK_TOLERANCE_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  WEBHOOK_MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(10 * 1024 * 1024).default(256 * 1024),
  /**
   * contract §6: the service waits 10 s for a 2xx. A body that has not fully arrived after this long
   * gets 408, so a stalled or trickling sender cannot hold a request open for long.
   */
  WEBHOOK_READ_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(9_000, "keep it well inside the service's 10-second deadline (contract §6)")
    .default(5_000),
  /**
   * contract §6: the service gives up after 10 s and never retries. A delivery not recorded this
   * long after it arrived (body read included) is answered 503 with nothing recorded, so the answer
   * still reaches the service inside its deadline and is logged there as a failure to replay.
   */
  WEBHOOK_RECORD_DEADLINE_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(9_500, "keep it inside the service's 10-second deadline (contract §6)")
    .default(8_500),
  /**
   * Connections of the webhook ingest's own pool (lib/db/ingest-pool.ts), on top of
   * DATABASE_POOL_SIZE: a burst of deliveries queues for these and never for the pages' connections.
   */
  WEBHOOK_DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(4),
  /**
   * `npm run bench` only: turns on /api/bench/empty, an empty route handler the bench measures as
   * the framework's own cost. Off (the default) it answers 404, so production never serves it.
   */
  BENCH_EMPTY_ROUTE: z.enum(["on", "off"]).default("off"),
  /** Where operators install the app (the service's operator portal). Shown as a link only. */
  OPERATOR_PORTAL_URL: urlString.optional(),
  /**
   * contract §7: where the app may send an operator to re-authorize (reauth_url from an API answer):
   * the service's origins, comma-separated. Unset: the origins of OPERATOR_PORTAL_URL, OAUTH_ISSUER
   * and PARTNER_API_BASE_URL (lib/partner-api/service-origins.ts).
   */
  REAUTH_URL_ORIGINS: OriginListSchema.optional(),

  TOKEN_ENCRYPTION_KEYS: encryptionKeysSchema,

  /**
   * The partner's staff who may use the console (/admin): comma-separated `<email>=<password hash>`
   * or `<email>=<password hash>=<role>` (viewer or operator; no role: operator), each entry made with
   * `npm run staff:password`. Empty: no console access. Checked whole at start-up (a bad entry stops
   * the app), and read again on every request (lib/auth/staff.ts).
   */
  STAFF_USERS: z
    .string()
    .default("")
    .superRefine((value, ctx) => {
      try {
        parseStaffUsers(value);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message.replace(/^STAFF_USERS /, "") });
      }
    }),
  /** Bearer secret for /api/cron/* (platform schedulers). Unset: the cron routes answer 503. */
  CRON_SECRET: z.string().min(32, "use at least 32 random characters").optional(),

  /** Upper bound for every outbound call to the service. */
  HTTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /**
   * After SIGTERM, in-flight requests and the job under way get this long to finish; then the process
   * logs what it gives up and exits 1 (lib/shutdown.ts). 25 s: the longest in-flight work here is a
   * page that refreshes a token and then calls the API, two outbound calls of HTTP_TIMEOUT_MS (10 s
   * each), plus a margin; and it ends before Kubernetes' default 30 s grace period sends SIGKILL. The
   * platform's grace period must be longer (Docker's and Compose's default is 10 s: compose.yaml
   * raises it; docs/deploying.md).
   */
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(25),
  /**
   * Token refreshes of different installs at once per process (lib/oauth/refresh-lock.ts): size it to
   * what the identity provider can take. It costs no connections: the locks of all of a process's
   * refreshes share one (plus one for each refresh that waits for another process's lock). 50 serves
   * 50 installs expiring together in one round of the identity provider's latency.
   */
  REFRESH_CONCURRENCY: z.coerce.number().int().min(1).max(200).default(50),
  /**
   * Per-install jobs (keep-alive refreshes, install checks) each worker process runs at once, per
   * queue (lib/jobs/engine.ts). Refreshes are bounded by REFRESH_CONCURRENCY too; add workers to go
   * faster. The cron routes use it as their batch's concurrency.
   */
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(10),
  /**
   * Which jobs this worker process runs (comma-separated: keep-alive, reconcile, sync, retention;
   * default all). Lets a deployment give the sync its own workers, apart from keep-alive's.
   */
  WORKER_JOBS: z
    .string()
    .transform((value) => value.split(",").map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.enum(["keep-alive", "reconcile", "sync", "retention"])).min(1, "name at least one job"))
    .optional(),
  /**
   * How long a per-install job may stay in a worker's hands before it counts as abandoned (its worker
   * was killed, its machine lost) and is retried by another worker: comma-separated `<job>=<seconds>`
   * (keep-alive, reconcile, sync, retention; 1 s to 24 h, pg-boss's bound). A job not named keeps its
   * queue's default (lib/jobs/queues.ts: 5, 5, 30 and 10 minutes). Shorter: a dead worker's job is
   * picked up sooner; but never shorter than the job can honestly take, or a slow job is run twice.
   * Read where a job is enqueued (lib/jobs/enqueue.ts, `expiryOf`), so give every process the same value.
   */
  JOB_EXPIRE_SECONDS: z
    .string()
    .transform((value, ctx) => {
      const expiry: Partial<Record<"keep-alive" | "reconcile" | "sync" | "retention", number>> = {};
      for (const entry of value.split(",").map((s) => s.trim()).filter(Boolean)) {
        const match = /^(keep-alive|reconcile|sync|retention)=(\d{1,5})$/.exec(entry);
        const seconds = Number(match?.[2]);
        if (!match || seconds < 1 || seconds > 24 * 3600) {
          ctx.addIssue({ code: "custom", message: "each entry must be `<keep-alive|reconcile|sync|retention>=<seconds, 1-86400>`, e.g. `keep-alive=300,sync=1800`" });
          return z.NEVER;
        }
        expiry[match[1] as keyof typeof expiry] = seconds;
      }
      return expiry;
    })
    .optional(),
  /**
   * How long a cron route (/api/cron/*) keeps working queued jobs before it answers; keep it inside
   * your serverless platform's function time limit.
   */
  CRON_TIME_LIMIT_SECONDS: z.coerce.number().int().min(1).max(900).default(25),

  // ----- the partner API's rate budget (lib/partner-api/budget.ts, contract §8) -----
  /**
   * The share of each install's rate limit the app never plans to use: it absorbs the spread of
   * network delays between the app's clock and the service's counting. Half of it is the burst
   * pages may take at once; the steady rate is (1 - margin) of the limit.
   */
  API_BUDGET_MARGIN: z.coerce.number().min(0.01).max(0.5).default(0.04),
  /** How long a page's API call may wait for budget (and retries) before the page says "busy". */
  API_INTERACTIVE_DEADLINE_MS: z.coerce.number().int().min(500).max(60_000).default(8_000),
  /** How long background work (sweeps, sync) may wait for budget per call before giving up. */
  API_BACKGROUND_DEADLINE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(120_000),
  /** Retries of one call after a 429, and after a 5xx or timeout (idempotent requests only). */
  API_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),

  // ----- the sync of each operator's data (lib/sync/, docs/data-retention.md) -----
  /** Records per page when the sync walks a list (public-facts.md: perPage 1 to 100). */
  SYNC_PAGE_SIZE: z.coerce.number().int().min(1).max(100).default(100),
  /**
   * An incremental pass finds new records only (docs/spec-gaps.md, lib/sync/strategy.ts); a full pass
   * at least this often picks up changes to older records and marks deleted ones.
   */
  SYNC_FULL_PASS_INTERVAL_HOURS: z.coerce.number().min(0).max(24 * 30).default(24),
  /** Days an uninstalled operator's synced data is kept before it is deleted; 0 = at once. */
  /** How often each active install is synced (the scheduled fan-out runs every 5 minutes; lib/jobs/queues.ts). */
  SYNC_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(24 * 60).default(15),
  SYNC_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(30),

  // ----- the operator dashboard's optional features (README "Teams and Energy") -----
  /**
   * "Manage teams" (rename a team from the dashboard). Off as shipped: the app requests the narrowest
   * scopes (contract §2). On, the app needs `teams:write`: the app owner must also add it to the
   * app's registered scopes at the service, which flags every install for re-consent (contract §3).
   */
  DASHBOARD_MANAGE_TEAMS: z.enum(["on", "off"]).default("off"),
  /**
   * The EVSE charge history (contract §4.3, beta): its method, path and parameter names are not shown,
   * so they live here; the defaults are what the sandbox serves (sandbox/README.md decision 46). The
   * path names its three parameters as {chargePointId}, {evseId} and {connectorId}.
   */
  ENERGY_API_METHOD: z.enum(["GET", "POST"]).default("GET"),
  ENERGY_API_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9_\-./{}]*$/, "must be a path under /api/v1, e.g. /energy/charge-points/{chargePointId}/evses/{evseId}/connectors/{connectorId}/charges")
    .refine(
      (path) => ["{chargePointId}", "{evseId}", "{connectorId}"].every((name) => path.split(name).length === 2),
      "must name each of {chargePointId}, {evseId} and {connectorId} exactly once",
    )
    .default("/energy/charge-points/{chargePointId}/evses/{evseId}/connectors/{connectorId}/charges"),
  /** Names of the operation's query parameters the app sends: the start and end of the range, and a row limit. */
  ENERGY_API_FROM_PARAM: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/).default("from"),
  ENERGY_API_TO_PARAM: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/).default("to"),
  ENERGY_API_LIMIT_PARAM: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/).default("limit"),

  // ----- sign-in, sessions and abuse limits (docs/security.md) -----
  /**
   * How many reverse proxies in front of the app append to X-Forwarded-For; the client's address
   * is the entry that many places from the right (at least the rightmost). 0 or 1 both mean the
   * rightmost entry; see lib/http/client-address.ts for what a client can spoof at each setting.
   */
  TRUSTED_PROXY_COUNT: z.coerce.number().int().min(0).max(10).default(0),
  /** Password verifications (scrypt, 32 MiB and ~0.1 s each) at once per process; more answer "busy". */
  PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  /** Sign-in attempts per window from one client address, and for one account (across addresses). */
  SIGN_IN_ATTEMPTS_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000).default(20),
  SIGN_IN_ATTEMPTS_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(10),
  /**
   * Attempts per window from a browser that signed in to the account before (its device cookie,
   * lib/auth/staff-device.ts). Counted instead of the account's; beyond them the browser is unknown.
   */
  SIGN_IN_ATTEMPTS_PER_DEVICE: z.coerce.number().int().min(1).max(10_000).default(5),
  SIGN_IN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** The first lock-out after a window's attempts are used up; each further one doubles, up to 1 h. */
  SIGN_IN_LOCKOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** Requests to the redirect_uri per client address per minute (each may cost a token call). */
  CALLBACK_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(20),
  /** A session ends this long after sign-in, however active (next-auth's maxAge only slides). */
  SESSION_ABSOLUTE_LIFETIME_SECONDS: z.coerce.number().int().min(60).max(30 * 86_400).default(12 * 3600),

  // ----- outbound alerts (lib/alerts/, docs/operations.md "Alerts") -----
  /**
   * Where alerts are POSTed (an incident tool, a relay, or a Slack incoming webhook with
   * ALERT_WEBHOOK_FORMAT=slack). Unset: alerts are off, and each one is a log line instead. https in
   * production; plain http only for localhost (the sandbox's alert sink in development and tests).
   */
  ALERT_WEBHOOK_URL: urlString.optional(),
  /**
   * The Standard Webhooks signing secret: `whsec_` and 24 to 64 random bytes in base64 (generate one
   * with `echo "whsec_$(openssl rand -base64 32)"`). Required with ALERT_WEBHOOK_URL.
   */
  ALERT_WEBHOOK_SECRET: z
    .string()
    .refine((value) => {
      const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
      const bytes = match ? Buffer.from(match[1]!, "base64").length : 0;
      return bytes >= 24 && bytes <= 64;
    }, 'must be "whsec_" and 24 to 64 random bytes in base64: generate one with `echo "whsec_$(openssl rand -base64 32)"`')
    .optional(),
  /** standard: the documented JSON alert; slack: `{"text": ...}` for a Slack incoming webhook. */
  ALERT_WEBHOOK_FORMAT: z.enum(["standard", "slack"]).default("standard"),
  /** A sync "keeps failing" after this many failed runs in a row (its retries count): then one sync.failing alert. */
  ALERT_SYNC_FAILURES: z.coerce.number().int().min(1).max(100).default(3),
});

export type Env = z.infer<typeof EnvSchema>;

// ----- what a deployment must not run with ----------------------------------------------------
//
// The schema above says what a value must look like. A deployment must also not run with a value
// copied from .env.example (anyone could forge sessions with a published NEXTAUTH_SECRET), with
// plain http to or from the app, or with the embedded development database. These rules are checked
// on the raw values, beside the schema, so that one message names every problem at once.

/** Variables that hold an address, a secret or an account: never a template's placeholder. */
const CONFIGURED_BY_HAND = [
  "APP_URL",
  "DATABASE_URL",
  "NEXTAUTH_URL",
  "NEXTAUTH_SECRET",
  "TOKEN_ENCRYPTION_KEYS",
  "CRON_SECRET",
  "STAFF_USERS",
  "OAUTH_ISSUER",
  "OAUTH_CLIENT_ID",
  "OAUTH_CLIENT_SECRET",
  "OAUTH_REDIRECT_URI",
  "PARTNER_API_BASE_URL",
  "WEBHOOK_SECRET",
  "WEBHOOK_PREVIOUS_SECRET",
  "OPERATOR_PORTAL_URL",
  "REAUTH_URL_ORIGINS",
  "ALERT_WEBHOOK_URL",
  "ALERT_WEBHOOK_SECRET",
] as const;

/** Addresses of the app and the service: https in a deployment, http only on loopback elsewhere. */
const SERVICE_AND_APP_URLS = ["APP_URL", "NEXTAUTH_URL", "OAUTH_ISSUER", "OAUTH_REDIRECT_URI", "PARTNER_API_BASE_URL", "OPERATOR_PORTAL_URL"] as const;

/**
 * A template's placeholder: a "replace-with"/"your-" phrase, a `<hole>` to fill in, or a domain
 * reserved for documentation (RFC 2606: example.com, example-service.com in .env.example).
 */
const PLACEHOLDER = /replace-with|(^|[^a-z])your-|written-by-npm-run-dev|<[a-z-]+>|(^|[./@-])example([./-]|$)/i;

/** The variables to check: process.env, or any set of them (tests). */
type EnvSource = Record<string, string | undefined>;

const isLoopbackUrl = (value: string) => URL.canParse(value) && LOOPBACK_HOSTS.has(new URL(value).hostname);

/**
 * `next start` always runs with NODE_ENV=production. Served on a loopback APP_URL, that is the
 * production build running on one machine (the tests, the bench, a developer trying the build), not
 * a deployment: the deployment rules below apply only when the app is served elsewhere.
 */
export function isDeployment(source: EnvSource = process.env): boolean {
  return source.NODE_ENV === "production" && !isLoopbackUrl(source.APP_URL ?? "");
}

function deploymentProblems(source: EnvSource): string[] {
  const problems: string[] = [];
  const deployed = isDeployment(source);
  for (const name of deployed ? CONFIGURED_BY_HAND : []) {
    const value = source[name];
    if (value && PLACEHOLDER.test(value)) problems.push(`${name}: looks like a placeholder copied from .env.example; set the real value`);
  }
  for (const name of SERVICE_AND_APP_URLS) {
    const value = source[name];
    if (!value || !URL.canParse(value) || new URL(value).protocol !== "http:") continue;
    if (deployed) problems.push(`${name}: must use https in production (plain http carries codes, tokens and sessions in the clear)`);
    else if (!isLoopbackUrl(value)) problems.push(`${name}: plain http is allowed only for localhost (use https)`);
  }
  // The app's own secrets (NEXTAUTH_SECRET, CRON_SECRET) need 32 characters everywhere (the schema);
  // the service's (client and webhook secrets) are whatever it issued (docs/spec-gaps.md).
  if (deployed) {
    const database = source.DATABASE_URL;
    if (database && URL.canParse(database) && new URL(database).username === "postgres" && new URL(database).password === "postgres") {
      problems.push("DATABASE_URL: points at the embedded development database (postgres:postgres); use your production PostgreSQL");
    }
  }
  return problems;
}

/**
 * Alerts are configured whole or not at all: a URL without a secret would send unsigned alerts that a
 * receiver cannot trust, and a secret without a URL is a setting that silently does nothing. Alerts
 * carry install and operator names, so they travel over https (http only to this machine).
 */
function alertProblems(source: EnvSource): string[] {
  const url = source.ALERT_WEBHOOK_URL;
  const secret = source.ALERT_WEBHOOK_SECRET;
  const problems: string[] = [];
  if (url && !secret) problems.push("ALERT_WEBHOOK_SECRET: is required with ALERT_WEBHOOK_URL (alerts are signed)");
  if (secret && !url) problems.push("ALERT_WEBHOOK_URL: is required with ALERT_WEBHOOK_SECRET (or unset both to turn alerts off)");
  if (url && URL.canParse(url) && new URL(url).protocol === "http:") {
    if (isDeployment(source)) problems.push("ALERT_WEBHOOK_URL: must use https in production");
    else if (!isLoopbackUrl(url)) problems.push("ALERT_WEBHOOK_URL: plain http is allowed only for localhost (use https)");
  }
  return problems;
}

/** Every problem with the configuration, one line each; empty when the app may start. */
export function environmentProblems(source: EnvSource = process.env): string[] {
  const parsed = EnvSchema.safeParse(source);
  const schemaProblems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => {
        const name = issue.path.join(".") || "(root)";
        const unset = issue.code === "invalid_type" && source[name] === undefined;
        return `${name}: ${unset ? "is required but not set" : issue.message}`;
      });
  return [...schemaProblems, ...deploymentProblems(source), ...alertProblems(source)];
}

function describeProblems(problems: string[]): string {
  return (
    `Invalid environment configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}\n` +
    "See .env.example for every variable. `npm run dev` writes a working .env for local use."
  );
}

let cached: Env | undefined;

export function env(): Env {
  if (cached) return cached;
  const problems = environmentProblems(process.env);
  // Fail fast: a misconfigured app must not start serving requests.
  if (problems.length > 0) throw new Error(describeProblems(problems));
  cached = EnvSchema.parse(process.env);
  return cached;
}

/**
 * Checks the whole configuration once, before anything is served or run, and stops the process
 * with one message naming every problem (instrumentation.ts for the app; the worker and scripts).
 */
export function assertValidEnvironment(processName: string): void {
  const problems = environmentProblems(process.env);
  if (problems.length === 0) return;
  console.error(`[${processName}] ${describeProblems(problems)}`);
  process.exit(1);
}

/**
 * The log level alone, readable before (and even if) the rest of the environment is valid, so the
 * logger can report configuration errors.
 */
export function logLevel(): Env["LOG_LEVEL"] {
  const parsed = EnvSchema.shape.LOG_LEVEL.safeParse(process.env.LOG_LEVEL);
  return parsed.success ? parsed.data : "info";
}
