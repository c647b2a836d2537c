// The one module every partner API call goes through (contract §4.2): one function per operation,
// every answer validated with zod, every failure classified into a PartnerApiError the caller can
// act on. Each request:
//   1. waits for the install's rate budget (lib/partner-api/budget.ts), within the caller's deadline;
//   2. is sent with a timeout (HTTP_TIMEOUT_MS, and never past the deadline);
//   3. has its RateLimit-* headers read against the budget (public-facts.md);
//   4. has its Date header compared with the app's clock (./service-clock.ts: webhooks depend on it);
//   5. after a 429, holds the install's budget until the window resets (RateLimit-ResetsIn), or for
//      an exponential backoff with full jitter when the service does not say, then retries; after a
//      5xx or a timeout, retries idempotent requests only, with jittered backoff. Retries are
//      bounded (API_MAX_RETRIES) and each one takes budget like any request.
import "server-only";
import { randomInt } from "node:crypto";
import { AsyncLocalStorage } from "node:async_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { z } from "zod";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { recordBudgetWait, traceApiCall, type ApiCallTrace } from "@/lib/telemetry";
import {
  BudgetExhaustedError,
  MAX_HOLD_MS,
  holdAfterRateLimited,
  observeAnswer,
  readRateLimitHeaders,
  takeBudget,
  type BudgetGrant,
  type Priority,
} from "./budget";
import {
  ApiErrorBodySchema,
  ChargePageSchema,
  ChargePointPageSchema,
  ConsumerSchema,
  NeedsReauthBodySchema,
  RawListPageSchema,
  TeamSchema,
  AnyJsonSchema,
  type ChargePage,
  type Team,
  type ChargePointPage,
  type Consumer,
  type RawListPage,
} from "./schemas";
import { noteServiceDate } from "./service-clock";
import { isServiceUrl, originForLog } from "./service-origins";

/**
 * What went wrong, in the terms the app acts on (contract §7):
 * - `unauthorized` (401): the access token is expired or the install revoked: refresh, then re-install;
 * - `needs_reauth` (403 NEEDS_REAUTH): stop calling the API for this install, send the operator to reauthUrl;
 * - `forbidden` (any other 403): e.g. a scope that was not granted; never flags the install;
 * - `rate_limited` (429, after the retries), or no budget left within the caller's deadline
 *   (errorCode BUDGET_EXHAUSTED): try again in `detail.resetsInSeconds`;
 * - `unavailable`: a connection error or a 5xx (upstream error), after the retries;
 * - `timeout`: no answer within the timeout, after the retries;
 * - `bad_request` / `not_found`: the app asked for something wrong;
 * - `bad_response`: the answer did not match the schema.
 */
export type PartnerApiErrorKind =
  | "unauthorized"
  | "needs_reauth"
  | "forbidden"
  | "rate_limited"
  | "unavailable"
  | "timeout"
  | "bad_request"
  | "not_found"
  | "bad_response";

export class PartnerApiError extends Error {
  constructor(
    readonly kind: PartnerApiErrorKind,
    readonly status: number | undefined,
    readonly errorCode: string | undefined,
    readonly detail: {
      reauthUrl?: string;
      installId?: number;
      /** Seconds until the rate window resets (the API's RateLimit-ResetsIn), or until budget is free. */
      resetsInSeconds?: number;
      /**
       * bad_request only: the service's own explanation (`message`, public-facts.md "Errors"),
       * shortened, for a form to show next to what the operator typed. Never holds a token.
       */
      serviceMessage?: string;
    } = {},
  ) {
    super(`partner API: ${kind}${status ? ` (HTTP ${status}${errorCode ? ` ${errorCode}` : ""})` : ""}`);
    this.name = "PartnerApiError";
  }
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

async function classifyFailure(response: Response): Promise<PartnerApiError> {
  const body = await readJson(response);
  const parsed = ApiErrorBodySchema.safeParse(body);
  const errorCode = parsed.success ? parsed.data.errorCode : undefined;
  const status = response.status;
  if (status === 401) return new PartnerApiError("unauthorized", status, errorCode);
  if (status === 403) {
    // contract §7: NEEDS_REAUTH is told apart from every other 403 by its errorCode and body.
    const reauth = NeedsReauthBodySchema.safeParse(body);
    if (reauth.success) {
      const installId = reauth.data.context?.install_id;
      return new PartnerApiError("needs_reauth", status, "NEEDS_REAUTH", { reauthUrl: acceptReauthUrl(reauth.data.context?.reauth_url, installId), installId });
    }
    return new PartnerApiError("forbidden", status, errorCode);
  }
  if (status === 429) {
    const resetsIn = Number(response.headers.get("RateLimit-ResetsIn"));
    // Capped as the hold is (budget.ts MAX_HOLD_MS): a page says "try again in 60 s", not in years.
    return new PartnerApiError("rate_limited", status, errorCode, Number.isFinite(resetsIn) && resetsIn >= 0 ? { resetsInSeconds: Math.min(resetsIn, MAX_HOLD_MS / 1000) } : {});
  }
  if (status === 404) return new PartnerApiError("not_found", status, errorCode);
  if (status >= 500) return new PartnerApiError("unavailable", status, errorCode);
  const message = parsed.success ? parsed.data.message?.slice(0, 300) : undefined;
  return new PartnerApiError("bad_request", status, errorCode, message ? { serviceMessage: message } : {});
}

/**
 * contract §7: "send the operator to reauth_url". The app will send a browser there, so it keeps the
 * URL only when it is the service's own (lib/partner-api/service-origins.ts); any other is dropped
 * here, at the boundary, and the install is flagged without a link (the operator is told to open
 * the app from the portal). The log names the origin only: the path or query may hold a ticket.
 */
function acceptReauthUrl(reauthUrl: string | undefined, installId: number | undefined): string | undefined {
  if (reauthUrl === undefined || isServiceUrl(reauthUrl)) return reauthUrl;
  logger.warn(
    { installId, reauthUrlOrigin: originForLog(reauthUrl) },
    "NEEDS_REAUTH named a reauth_url outside the service's origins (REAUTH_URL_ORIGINS); the app will not send anyone there",
  );
  return undefined;
}

/**
 * Who pays for a call and how long it may take. Made by lib/oauth/access.ts for each use of an
 * install's token; `null` only for the redirect_uri's first call, made before the install is
 * stored (one call per install, it cannot hammer anything).
 */
export type ApiCall = {
  installRowId: string;
  priority: Priority;
  /** Epoch ms after which the caller has no use for an answer. */
  deadline: number;
};

/**
 * A call's deadline from its priority: a page cannot wait long, background work can. Inside a run
 * with a time limit (withRunDeadline), never later than the run's end.
 */
export function callFor(installRowId: string, priority: Priority = "interactive"): ApiCall {
  const { API_INTERACTIVE_DEADLINE_MS, API_BACKGROUND_DEADLINE_MS } = env();
  const own = Date.now() + (priority === "interactive" ? API_INTERACTIVE_DEADLINE_MS : API_BACKGROUND_DEADLINE_MS);
  const runEnds = runDeadline.getStore();
  return { installRowId, priority, deadline: runEnds === undefined ? own : Math.min(own, runEnds) };
}

// A cron route must answer its scheduler within CRON_TIME_LIMIT_SECONDS (lib/jobs/cron-route.ts),
// but a background call may wait API_BACKGROUND_DEADLINE_MS (2 minutes) for budget: on a small
// budget one job's page could keep the route busy long past its limit, and a serverless platform
// would kill it mid-job. The run's end is carried to every call its jobs make through
// AsyncLocalStorage, so the jobs (sync, reconcile, keep-alive) need not pass a deadline through
// every function between the engine and the client.
const runDeadline = new AsyncLocalStorage<number>();

/** Runs `work` with every API call made within it bounded by `deadline` (epoch ms). */
export function withRunDeadline<T>(deadline: number, work: () => Promise<T>): Promise<T> {
  return runDeadline.run(deadline, work);
}

/** The end of the run this code is part of (withRunDeadline), if it has one. */
export function currentRunDeadline(): number | undefined {
  return runDeadline.getStore();
}

/**
 * Counts per install in this process: requests sent, 429s met, retries, requests that had to wait
 * for budget, calls refused for want of budget, and the time spent in the budget's statement and in
 * the requests themselves. What tests (the counts) and the bench (the times) read, and what a
 * metrics exporter would publish.
 */
export type ApiCounters = {
  requests: number;
  rateLimited: number;
  retries: number;
  waitedForBudget: number;
  budgetExhausted: number;
  budgetStatementMs: number;
  requestMs: number;
};
const counters = new Map<string, ApiCounters>();
export function apiCounters(installRowId: string): ApiCounters {
  let entry = counters.get(installRowId);
  if (!entry) {
    entry = { requests: 0, rateLimited: 0, retries: 0, waitedForBudget: 0, budgetExhausted: 0, budgetStatementMs: 0, requestMs: 0 };
    counters.set(installRowId, entry);
  }
  return entry;
}
const NO_INSTALL = "-";

/** Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"): a random wait up to base·2^n. */
function fullJitter(attempt: number, baseMs: number, capMs: number): number {
  return randomInt(Math.max(1, Math.min(capMs, baseMs * 2 ** attempt)) + 1);
}
const SERVER_ERROR_BACKOFF = { baseMs: 200, capMs: 5_000 };
/** After a 429 without RateLimit-ResetsIn: public-facts.md asks for the client's own backoff. */
const RATE_LIMITED_BACKOFF = { baseMs: 1_000, capMs: 30_000 };

async function budgetFor(call: ApiCall): Promise<BudgetGrant> {
  try {
    const grant = await takeBudget(call.installRowId, call.priority, call.deadline);
    const count = apiCounters(call.installRowId);
    if (grant.waitedMs > 0) count.waitedForBudget += 1;
    recordBudgetWait(call.priority, grant.waitedMs);
    count.budgetStatementMs += grant.statementMs;
    return grant;
  } catch (error) {
    if (!(error instanceof BudgetExhaustedError)) throw error;
    apiCounters(call.installRowId).budgetExhausted += 1;
    throw new PartnerApiError("rate_limited", undefined, "BUDGET_EXHAUSTED", { resetsInSeconds: Math.ceil(error.retryInMs / 1000) });
  }
}

type RequestSpec<T extends z.ZodType> = {
  method: "GET" | "POST" | "PATCH";
  path: string;
  /** The path as a template (`/teams/{id}`) when `path` holds ids: what telemetry names the call by. */
  route?: string;
  query?: Record<string, string | number | undefined>;
  /** A JSON body (POST, PATCH). */
  body?: unknown;
  schema: T;
};

/** One call, in its own span (lib/telemetry): method, route template, attempts, status, 429s. */
function request<T extends z.ZodType>(accessToken: string, call: ApiCall | null, spec: RequestSpec<T>): Promise<z.infer<T>> {
  const span = { method: spec.method, route: spec.route ?? spec.path, installRowId: call?.installRowId, priority: call?.priority };
  return traceApiCall(span, (trace) => sendRequest(accessToken, call, spec, trace));
}

async function sendRequest<T extends z.ZodType>(accessToken: string, call: ApiCall | null, spec: RequestSpec<T>, trace: ApiCallTrace): Promise<z.infer<T>> {
  const { PARTNER_API_BASE_URL, HTTP_TIMEOUT_MS, API_MAX_RETRIES, API_INTERACTIVE_DEADLINE_MS } = env();
  const { path } = spec;
  const url = new URL(`/api/v1${path}`, PARTNER_API_BASE_URL);
  for (const [key, value] of Object.entries(spec.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  const deadline = call?.deadline ?? Date.now() + API_INTERACTIVE_DEADLINE_MS;
  const count = apiCounters(call?.installRowId ?? NO_INSTALL);
  // GET is idempotent (RFC 9110 §9.2.2): safe to send again after a 5xx or a lost answer.
  const idempotent = spec.method === "GET";
  let retries = 0;

  /**
   * Whether another attempt is allowed and can start `waitMs` from now within the deadline; waits
   * that long first unless the install's budget already holds every caller for it.
   */
  const mayRetry = async (waitMs: number, { budgetHolds = false } = {}): Promise<boolean> => {
    if (retries >= API_MAX_RETRIES || Date.now() + waitMs >= deadline) return false;
    retries += 1;
    count.retries += 1;
    if (waitMs > 0 && !budgetHolds) await sleep(waitMs);
    return true;
  };

  for (;;) {
    const grant = call ? await budgetFor(call) : null;
    const timeoutMs = Math.min(HTTP_TIMEOUT_MS, deadline - Date.now());
    if (timeoutMs <= 0) throw new PartnerApiError("timeout", undefined, undefined);
    count.requests += 1;
    trace.attempt(retries + 1);
    const sentAt = performance.now();
    const sentAtMs = Date.now();
    let response: Response;
    try {
      response = await fetch(url, {
        method: spec.method,
        headers: {
          Authorization: `Bearer ${accessToken}`,
          Accept: "application/json",
          ...(spec.body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: AbortSignal.timeout(timeoutMs),
        cache: "no-store",
      });
    } catch (error) {
      const timedOut = error instanceof Error && error.name === "TimeoutError";
      logger.warn({ path, timedOut, attempt: retries + 1, err: timedOut ? undefined : error }, timedOut ? "partner API did not answer in time" : "partner API unreachable");
      if (idempotent && (await mayRetry(fullJitter(retries, SERVER_ERROR_BACKOFF.baseMs, SERVER_ERROR_BACKOFF.capMs)))) continue;
      throw new PartnerApiError(timedOut ? "timeout" : "unavailable", undefined, undefined);
    }

    count.requestMs += performance.now() - sentAt;
    // Every answer, an error's too, says the service's time: how far off the app's clock is (./service-clock.ts).
    noteServiceDate(response.headers.get("Date"), "api", sentAtMs, Date.now());
    const limits = readRateLimitHeaders(response.headers);
    trace.answered(response.status, { remaining: limits.remaining, quota: limits.quota ?? grant?.quota });
    if (call && grant) await observeAnswer(call.installRowId, grant, limits);
    if (response.headers.get("Deprecation") === "true") {
      // public-facts.md "Versioning": deprecated versions say so; make it visible to the partner.
      logger.warn({ path, sunset: response.headers.get("Sunset") }, "partner API version is deprecated");
    }

    if (response.status === 429) {
      count.rateLimited += 1;
      const failure = await classifyFailure(response);
      // public-facts.md: no Retry-After; RateLimit-ResetsIn when sent, else the client's own backoff.
      // Never longer than one rate window (budget.ts MAX_HOLD_MS): a service may say years.
      const saidMs = limits.resetsInSeconds !== undefined ? limits.resetsInSeconds * 1000 : fullJitter(retries, RATE_LIMITED_BACKOFF.baseMs, RATE_LIMITED_BACKOFF.capMs);
      const waitMs = Math.min(MAX_HOLD_MS, saidMs);
      logger.warn(
        { path, installRowId: call?.installRowId, waitMs, resetsInSeconds: limits.resetsInSeconds, attempt: retries + 1 },
        "partner API answered 429; holding the install's budget",
      );
      trace.rateLimited(waitMs);
      if (call && grant) {
        // Every caller of the install, in every instance, waits: no stampede when the window resets.
        await holdAfterRateLimited(call.installRowId, grant, saidMs, limits.resetsInSeconds);
        if (await mayRetry(waitMs, { budgetHolds: true })) continue;
      } else if (await mayRetry(waitMs)) continue;
      throw failure;
    }
    if (response.status >= 500) {
      const failure = await classifyFailure(response);
      logger.warn({ path, status: response.status, attempt: retries + 1 }, "partner API answered with a server error");
      if (idempotent && (await mayRetry(fullJitter(retries, SERVER_ERROR_BACKOFF.baseMs, SERVER_ERROR_BACKOFF.capMs)))) continue;
      throw failure;
    }
    if (!response.ok) throw await classifyFailure(response);
    const parsed = spec.schema.safeParse(await readJson(response));
    if (!parsed.success) {
      logger.warn({ path, issues: parsed.error.issues.slice(0, 5) }, "partner API answer did not match the schema");
      throw new PartnerApiError("bad_response", response.status, undefined);
    }
    return parsed.data;
  }
}

/** `GET /consumers/me`: who the token belongs to (public-facts.md; needs no scope). */
export function fetchConsumer(accessToken: string, call: ApiCall | null): Promise<Consumer> {
  return request(accessToken, call, { method: "GET", path: "/consumers/me", schema: ConsumerSchema });
}

/** `GET /charge-points` with `page` (from 0) and `perPage` (1 to 100, public-facts.md). */
export function fetchChargePoints(accessToken: string, call: ApiCall, page: { page: number; perPage: number }): Promise<ChargePointPage> {
  return request(accessToken, call, { method: "GET", path: "/charge-points", query: page, schema: ChargePointPageSchema });
}

/** `GET /charges` (scope charge-transactions:read, public-facts.md), one page. */
export function fetchCharges(accessToken: string, call: ApiCall, page: { page: number; perPage: number }): Promise<ChargePage> {
  return request(accessToken, call, { method: "GET", path: "/charges", query: page, schema: ChargePageSchema });
}

/** A list operation the sync reads (contract §4.2; public-facts.md "Lists and pagination"), as a synced resource declares it (lib/sync/resources.ts). */
export type ListPath = `/${string}`;

/**
 * One page of a list, each record kept as the service sent it (an object; unknown fields included):
 * the sync maps the fields it needs and stores the record whole beside them (lib/sync/). `/teams`
 * needs a teams scope, `/charges` charge-transactions:read (public-facts.md).
 */
export function fetchListPage(accessToken: string, call: ApiCall, path: ListPath, page: { page: number; perPage: number }): Promise<RawListPage> {
  return request(accessToken, call, { method: "GET", path, query: page, schema: RawListPageSchema });
}

/**
 * Renames one of the operator's teams (scope teams:write). The contract names the scope but not the
 * operation; this is the sandbox's shape (docs/spec-gaps.md, sandbox/README.md decision 45):
 * `PATCH /teams/{id}` with `{"name"}`, answering the team as listed. Not retried after a 5xx or a
 * lost answer (only GET is: RFC 9110 §9.2.2 does not make PATCH idempotent); a 429 is retried, as
 * the service did nothing with it.
 */
export function renameTeam(accessToken: string, call: ApiCall, teamId: string, name: string): Promise<Team> {
  return request(accessToken, call, { method: "PATCH", path: `/teams/${encodeURIComponent(teamId)}`, route: "/teams/{id}", body: { name }, schema: TeamSchema });
}

/** Where one EVSE is, in the terms of the charge-history operation's three path parameters (contract §4.3). */
export type EvseRef = { chargePointId: string; evseId: string; connectorId: string };

/**
 * The EVSE charge history (contract §4.3, beta, scope energy:read). Method, path and parameter names
 * come from the configuration (ENERGY_API_*), the contract shows none of them; the answer is left as
 * the service sent it, for lib/dashboard/energy.ts to read tolerantly (its structure may change: §9).
 * With POST, the parameters travel as a JSON body instead of the query.
 */
export function fetchEvseChargeHistory(accessToken: string, call: ApiCall, evse: EvseRef, range: { from?: string; to?: string; limit?: number }): Promise<unknown> {
  const { ENERGY_API_METHOD, ENERGY_API_PATH, ENERGY_API_FROM_PARAM, ENERGY_API_TO_PARAM, ENERGY_API_LIMIT_PARAM } = env();
  const path = ENERGY_API_PATH.replace("{chargePointId}", encodeURIComponent(evse.chargePointId))
    .replace("{evseId}", encodeURIComponent(evse.evseId))
    .replace("{connectorId}", encodeURIComponent(evse.connectorId));
  const parameters = { [ENERGY_API_FROM_PARAM]: range.from, [ENERGY_API_TO_PARAM]: range.to, [ENERGY_API_LIMIT_PARAM]: range.limit };
  return ENERGY_API_METHOD === "GET"
    ? request(accessToken, call, { method: "GET", path, route: ENERGY_API_PATH, query: parameters, schema: AnyJsonSchema })
    : request(accessToken, call, { method: "POST", path, route: ENERGY_API_PATH, body: parameters, schema: AnyJsonSchema });
}
