// Sandbox configuration: the only reader of process.env in sandbox/.
// It reads the SAME variables as the app, so one .env drives both sides of the flow.
import path from "node:path";
import { z } from "zod";

/** Scope grammar from contract §2: <resource> or <resource>:<permission>, permission read|write|delete. */
export const SCOPE_PATTERN = /^[a-z][a-z0-9-]*(?::(?:read|write|delete))?$/;

/** offline_access is added by the service, never requested by the app (contract §2). */
export const OFFLINE_ACCESS = "offline_access";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The contract requires HTTPS; the sandbox also accepts plain http on loopback so it runs offline. */
const httpsOrLoopbackUrlSchema = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname));
  } catch {
    return false;
  }
}, "must be an https:// URL (http:// is accepted for localhost only)");

const requestedScopesSchema = z
  .string()
  .transform((value) => value.split(/\s+/).filter((scope) => scope.length > 0))
  .pipe(
    z
      .array(z.string().regex(SCOPE_PATTERN, "each scope must look like <resource> or <resource>:read|write|delete"))
      .min(1, "list at least one scope"),
  );

/**
 * Upper bounds of SANDBOX_CHARGES_PER_OPERATOR (decision 39): charge ids are `<operator index> * 1,000,000 + n`, and
 * the whole seed lives in memory (about 1 KB per charge), so operators × charges is capped too.
 */
export const MAX_CHARGES_PER_OPERATOR = 100_000;
export const MAX_SEEDED_CHARGES = 2_000_000;
/** New charges per operator per simulated hour at most (decision 43). */
export const MAX_LIVE_CHARGES_PER_HOUR = 1000;

const envSchema = z.object({
  SANDBOX_PORT: z.coerce.number().int().min(0).max(65535).default(4010),
  SANDBOX_HOST: z.string().min(1).optional(),
  SANDBOX_URL: z.url().optional(),
  SANDBOX_DATA_DIR: z.string().min(1).default(".data/sandbox"),
  SANDBOX_REFRESH_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  SANDBOX_RATE_LIMIT: z.coerce.number().int().min(1).max(100_000).default(1000),
  SANDBOX_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  SANDBOX_OPERATORS: z.coerce.number().int().min(3, "the three seeded operators are always there").max(200).default(3),
  SANDBOX_CHARGES_PER_OPERATOR: z.coerce.number().int().min(1).max(MAX_CHARGES_PER_OPERATOR).optional(),
  SANDBOX_LIVE_DATA: z.enum(["on", "off"], { message: 'must be "on" or "off"' }).default("on"),
  SANDBOX_LIVE_CHARGES_PER_HOUR: z.coerce.number().int().min(1).max(MAX_LIVE_CHARGES_PER_HOUR).default(2),
  OAUTH_CLIENT_ID: z.string().min(1),
  OAUTH_CLIENT_SECRET: z.string().min(1),
  OAUTH_REDIRECT_URI: httpsOrLoopbackUrlSchema,
  WEBHOOK_SECRET: z.string().min(1),
  WEBHOOK_URL: httpsOrLoopbackUrlSchema,
  APP_REQUESTED_SCOPES: requestedScopesSchema,
  APP_NAME: z.string().min(1).default("Partner App"),
  SANDBOX_REAUTH_RETURN_URL: httpsOrLoopbackUrlSchema.optional(),
  /** The app's alert signing secret (decision 50): known, the alert sink checks each alert's signature. */
  ALERT_WEBHOOK_SECRET: z.string().min(1).optional(),
}).refine(
  (e) => e.SANDBOX_CHARGES_PER_OPERATOR === undefined || e.SANDBOX_CHARGES_PER_OPERATOR * e.SANDBOX_OPERATORS <= MAX_SEEDED_CHARGES,
  { path: ["SANDBOX_CHARGES_PER_OPERATOR"], message: `times SANDBOX_OPERATORS must stay at most ${MAX_SEEDED_CHARGES.toLocaleString("en")} (the seed is kept in memory)` },
);

export interface SandboxConfig {
  /** Port to listen on; 0 picks a free one (tests). */
  port: number;
  /**
   * Address to listen on. Default (absent): loopback only, see listenHost(). The control API has
   * no authentication, so the sandbox must not be reachable from the network by accident.
   */
  host?: string;
  /** Public origin, without trailing slash. When absent it is http://localhost:<bound port>. */
  publicUrl?: string;
  /** Absolute folder for state.json. */
  dataDir: string;
  client: {
    clientId: string;
    clientSecret: string;
    redirectUri: string;
    /** What the app asks for; offline_access is added by the portal, not listed here. */
    requestedScopes: string[];
    appName: string;
    /**
     * Where the operator lands after granting a re-authorization at reauth_url (README decision 27).
     * Absent: the origin of redirect_uri + "/dashboard" (see reauthReturnUrl()).
     */
    reauthReturnUrl?: string;
  };
  webhook: {
    url: string;
    secret: string;
    /** Contract §6: the app must answer within 10 seconds. */
    timeoutMs: number;
  };
  /** Artificial delay while a refresh holds its in-flight marker, so tests can provoke concurrent refreshes. */
  refreshDelayMs: number;
  /**
   * The default budget of every install (contract §8: 1,000 requests per 60 seconds). The control API can change the
   * default and give one install its own (api/budget.ts, decision 36); POST /_sandbox/reset goes back to this one.
   */
  rateLimit: { limit: number; windowSeconds: number };
  /**
   * Charges per operator (absent: the seed's own counts, 36 / 14 / 52 / 2). A large list for pagination benches
   * (decision 39); the first charges stay byte-identical to the default seed's.
   */
  chargesPerOperator?: number;
  /** How many operators the seed has (absent: 3): the three in the README, then plain extra ones (decision 34). */
  operatorCount?: number;
  /**
   * Data that moves with the clock (decision 43): SANDBOX_LIVE_DATA (default on) and SANDBOX_LIVE_CHARGES_PER_HOUR.
   * Absent (in-process tests): off, so counts stay exact unless a test switches it on (POST /_sandbox/live-data).
   */
  liveData?: { enabled: boolean; chargesPerHour: number };
  /** The app's alert signing secret (`whsec_…`), for the alert sink's signature check (decision 50); absent: unchecked. */
  alertSecret?: string;
}

export class ConfigError extends Error {}

/** Parses the environment; throws a ConfigError whose message names every bad or missing variable. */
export function loadConfig(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): SandboxConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = issue.path.join(".") || "(environment)";
      const missing = issue.code === "invalid_type" && env[name] === undefined;
      return `  - ${name}: ${missing ? "is required but not set" : issue.message}`;
    });
    throw new ConfigError(`Sandbox configuration is invalid:\n${lines.join("\n")}\nSee sandbox/README.md for every variable.`);
  }
  const e = parsed.data;
  return {
    port: e.SANDBOX_PORT,
    host: e.SANDBOX_HOST,
    publicUrl: e.SANDBOX_URL?.replace(/\/+$/, ""),
    dataDir: path.resolve(cwd, e.SANDBOX_DATA_DIR),
    client: {
      clientId: e.OAUTH_CLIENT_ID,
      clientSecret: e.OAUTH_CLIENT_SECRET,
      redirectUri: e.OAUTH_REDIRECT_URI,
      // The service adds offline_access itself (contract §2); drop it if an app lists it anyway.
      requestedScopes: [...new Set(e.APP_REQUESTED_SCOPES.filter((scope) => scope !== OFFLINE_ACCESS))],
      appName: e.APP_NAME,
      reauthReturnUrl: e.SANDBOX_REAUTH_RETURN_URL,
    },
    webhook: { url: e.WEBHOOK_URL, secret: e.WEBHOOK_SECRET, timeoutMs: 10_000 },
    refreshDelayMs: e.SANDBOX_REFRESH_DELAY_MS,
    rateLimit: { limit: e.SANDBOX_RATE_LIMIT, windowSeconds: e.SANDBOX_RATE_WINDOW_SECONDS },
    operatorCount: e.SANDBOX_OPERATORS,
    chargesPerOperator: e.SANDBOX_CHARGES_PER_OPERATOR,
    liveData: { enabled: e.SANDBOX_LIVE_DATA === "on", chargesPerHour: e.SANDBOX_LIVE_CHARGES_PER_HOUR },
    alertSecret: e.ALERT_WEBHOOK_SECRET,
  };
}

/** SANDBOX_REAUTH_RETURN_URL, or the app's dashboard: the origin of the registered redirect_uri + "/dashboard". */
export function reauthReturnUrl(config: SandboxConfig): string {
  return config.client.reauthReturnUrl ?? new URL("/dashboard", config.client.redirectUri).toString();
}

/** Whether `host` (a hostname; IPv6 with or without brackets) names this machine's loopback interface. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || LOOPBACK_HOSTS.has(`[${host}]`);
}

/**
 * Where the sandbox listens: SANDBOX_HOST when set; otherwise the host of SANDBOX_URL when it is a
 * loopback name (so `localhost` binds whatever `localhost` resolves to here, IPv4 or IPv6), else
 * `localhost`. Never every interface by default: anyone who can reach the control API can drive
 * the sandbox (it has no authentication, decision 18).
 */
export function listenHost(config: SandboxConfig): string {
  if (config.host) return config.host;
  const hostname = config.publicUrl ? new URL(config.publicUrl).hostname : "localhost";
  return LOOPBACK_HOSTS.has(hostname) ? hostname.replace(/^\[(.*)\]$/, "$1") : "localhost";
}
