// The only module that reads process.env. Everything else imports `env()` from here.
//
// Values are validated with zod the first time they are needed, and a bad or missing value stops
// the process with one message that names every problem, instead of failing later in a request.
// Reading lazily (not at import time) lets `next build` import routes without a configured env.
import "server-only";
import { z } from "zod";
import { runtimeShape } from "./env/runtime";
import { appShape } from "./env/app";
import { serviceShape } from "./env/service";
import { webhooksShape } from "./env/webhooks";
import { benchShape } from "./env/bench";
import { serviceLinksShape } from "./env/service-links";
import { secretsShape } from "./env/secrets";
import { processShape } from "./env/process";
import { jobsShape } from "./env/jobs";
import { apiBudgetShape } from "./env/api-budget";
import { syncShape } from "./env/sync";
import { retentionShape } from "./env/retention";
import { dashboardShape } from "./env/dashboard";
import { signInShape } from "./env/sign-in";
import { alertsShape } from "./env/alerts";
import { LOOPBACK_HOSTS } from "./env/formats";

// The formats other modules check values with, from where they have always been imported.
export { OriginListSchema, oauthIssuerSchema, partnerApiBaseUrlSchema } from "./env/formats";

/** Every setting, one part per concern (lib/env/), merged in the order their problems are reported. */
const EnvSchema = z.object({
  ...runtimeShape,
  ...appShape,
  ...serviceShape,
  ...webhooksShape,
  ...benchShape,
  ...serviceLinksShape,
  ...secretsShape,
  ...processShape,
  ...jobsShape,
  ...apiBudgetShape,
  ...syncShape,
  ...retentionShape,
  ...dashboardShape,
  ...signInShape,
  ...alertsShape,
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
