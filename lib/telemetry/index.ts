// Traces and metrics, through the OpenTelemetry API: the one module the domain imports for them
// (nothing else in lib/ imports @opentelemetry/*). Which SDK receives them, and where it sends them,
// is lib/telemetry/setup.ts's business; when nothing is configured the API is a no-op and every call
// here costs a function call and no allocation worth the name.
//
// Names follow the OpenTelemetry semantic conventions where one exists (`http.request.method`,
// `http.response.status_code`, `url.template`, `messaging.*`, `error.type`); the app's own concepts
// are under the product's metric prefix (`partner_app.` as shipped, lib/config/product.ts; `npm run
// rename` changes it). Attribute values are ids the app made (an install's row id, a queue name)
// and fixed words (an outcome, a reason): never a token, a code, a URL with its query, or anything
// an operator typed. Cardinality stays bounded at 10,000 installs: metrics never carry an
// install id (a span may: spans are sampled and stored per trace, not aggregated per attribute set).
import "server-only";
import { SpanKind, SpanStatusCode, metrics, trace, type Attributes, type Counter, type Histogram, type Meter, type MeterProvider, type Span } from "@opentelemetry/api";
import { PRODUCT } from "@/lib/config/product";

/** The product's names (lib/config/product.ts): `npm run rename` changes every metric and attribute name here. */
const SCOPE = PRODUCT.telemetryScope;
const PREFIX = PRODUCT.metricPrefix;
const tracer = trace.getTracer(SCOPE);

export { SpanKind };

/**
 * Runs `work` in a new active span (so spans started inside, such as the fetch instrumentation's,
 * are its children), ends it however `work` ends, and marks it failed when `work` throws. The error
 * is recorded by its class name only (`error.type`, semantic conventions): an error message can quote
 * an answer from the service, and is in the log already.
 */
export function inSpan<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes }, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, options, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setAttribute("error.type", error instanceof Error ? error.name : typeof error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Adds an event to the active span, if any (a lock taken, a 429 met). */
export function addSpanEvent(name: string, attributes?: Attributes): void {
  trace.getActiveSpan()?.addEvent(name, attributes);
}

// ---- Metrics -------------------------------------------------------------------------------------

/** Bucket bounds, in seconds, for waits that range from nothing to the refresh lock's 20 s bound. */
const WAIT_SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];
/** Sync lag, in seconds: minutes to days (the sync runs every few minutes; a stuck one falls behind by hours). */
const LAG_SECONDS_BUCKETS = [60, 300, 600, 900, 1800, 3600, 7200, 21_600, 43_200, 86_400, 259_200, 604_800];
/** Remaining share of a rate window (0 = exhausted, 1 = untouched). */
const RATIO_BUCKETS = [0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 1];

type Instruments = {
  refreshes: Counter;
  refreshLockWait: Histogram;
  apiRateLimited: Counter;
  budgetRemaining: Histogram;
  budgetWait: Histogram;
  webhookRejections: Counter;
  syncRuns: Counter;
  syncLag: Histogram;
  jobDuration: Histogram;
  retentionDeleted: Counter;
  retentionPurgeDuration: Histogram;
};

function createInstruments(meter: Meter): Instruments {
  return {
    refreshes: meter.createCounter(`${PREFIX}.token.refreshes`, {
      description: "Token refreshes asked for, by outcome (refreshed, not_needed, reinstall_needed, circuit_open, unavailable, unusable)",
      unit: "{refresh}",
    }),
    refreshLockWait: meter.createHistogram(`${PREFIX}.token.refresh_lock.wait_duration`, {
      description: "Time a refresh waited for a slot and for the install's lock (lib/oauth/refresh-lock.ts)",
      unit: "s",
      advice: { explicitBucketBoundaries: WAIT_SECONDS_BUCKETS },
    }),
    apiRateLimited: meter.createCounter(`${PREFIX}.api.rate_limited`, {
      description: "429 answers received from the partner API, by route template",
      unit: "{response}",
    }),
    budgetRemaining: meter.createHistogram(`${PREFIX}.rate_budget.remaining_ratio`, {
      description: "RateLimit-Remaining ÷ quota at each partner API answer: how close installs run to their limit",
      unit: "1",
      advice: { explicitBucketBoundaries: RATIO_BUCKETS },
    }),
    budgetWait: meter.createHistogram(`${PREFIX}.rate_budget.wait_duration`, {
      description: "Time a partner API call waited for its install's rate budget, by priority",
      unit: "s",
      advice: { explicitBucketBoundaries: WAIT_SECONDS_BUCKETS },
    }),
    webhookRejections: meter.createCounter(`${PREFIX}.webhook.rejections`, {
      description: "Webhook deliveries refused, by reason (invalid_signature, stale_delivery, invalid_envelope...)",
      unit: "{delivery}",
    }),
    syncRuns: meter.createCounter(`${PREFIX}.sync.runs`, {
      description: "Sync runs of one resource for one install, by resource and outcome",
      unit: "{run}",
    }),
    syncLag: meter.createHistogram(`${PREFIX}.sync.lag`, {
      description: "Age of the local copy of a resource when a sync pass brought it up to date",
      unit: "s",
      advice: { explicitBucketBoundaries: LAG_SECONDS_BUCKETS },
    }),
    // pg-boss records `messaging.process.duration` per batch itself; this one is per job, with its outcome.
    jobDuration: meter.createHistogram(`${PREFIX}.job.duration`, {
      description: "Duration of one job (one install's keep-alive, check, sync or purge; a fan-out), by queue and outcome",
      unit: "s",
      advice: { explicitBucketBoundaries: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] },
    }),
    // The history purge (lib/retention/purge.ts): how much each table loses per run, and how long it
    // takes; a duration that creeps up to the run's time limit means the purge is falling behind.
    retentionDeleted: meter.createCounter(`${PREFIX}.retention.deleted_rows`, {
      description: "Rows the history purge deleted, by table",
      unit: "{row}",
    }),
    retentionPurgeDuration: meter.createHistogram(`${PREFIX}.retention.purge.duration`, {
      description: "Duration of one table's purge run, by table and outcome (done, more)",
      unit: "s",
      advice: { explicitBucketBoundaries: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] },
    }),
  };
}

// The metrics API has no proxy (unlike traces): a meter taken before the SDK registers its provider
// stays a no-op. So the instruments are made on first use, and again if the provider changes (tests).
let made: { provider: MeterProvider; instruments: Instruments } | undefined;
function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (made?.provider !== provider) made = { provider, instruments: createInstruments(provider.getMeter(SCOPE)) };
  return made.instruments;
}

export type RefreshOutcome = "refreshed" | "not_needed" | "reinstall_needed" | "circuit_open" | "unavailable" | "unusable" | "error";

export function recordRefreshOutcome(outcome: RefreshOutcome): void {
  instruments().refreshes.add(1, { [`${PREFIX}.refresh.outcome`]: outcome });
}

/** The refresh lock's wait: a metric, and an event on the refresh's span (with the wait in ms). */
export function recordRefreshLockWait(waitMs: number): void {
  instruments().refreshLockWait.record(waitMs / 1000);
  addSpanEvent("refresh lock acquired", { [`${PREFIX}.lock.wait_ms`]: Math.round(waitMs) });
}

export function recordBudgetWait(priority: string, waitMs: number): void {
  instruments().budgetWait.record(waitMs / 1000, { [`${PREFIX}.api.priority`]: priority });
}

export function recordWebhookRejection(reason: string): void {
  instruments().webhookRejections.add(1, { [`${PREFIX}.webhook.reason`]: reason });
}

export function recordSyncRun(resource: string, outcome: string): void {
  instruments().syncRuns.add(1, { [`${PREFIX}.sync.resource`]: resource, [`${PREFIX}.sync.outcome`]: outcome });
}

export function recordRetentionPurge(table: string, outcome: string, deletedRows: number, seconds: number): void {
  const attributes = { [`${PREFIX}.retention.table`]: table };
  instruments().retentionDeleted.add(deletedRows, attributes);
  instruments().retentionPurgeDuration.record(seconds, { ...attributes, [`${PREFIX}.retention.outcome`]: outcome });
}

export function recordSyncLag(resource: string, lagSeconds: number): void {
  instruments().syncLag.record(Math.max(0, lagSeconds), { [`${PREFIX}.sync.resource`]: resource });
}

// ---- Partner API calls ---------------------------------------------------------------------------

/** What lib/partner-api/client.ts tells the span of one call as it goes (every attempt, retries included). */
export type ApiCallTrace = {
  /** An attempt is about to be sent (1 for the first). */
  attempt(attempt: number): void;
  /** An answer arrived: its status, and the rate headers read from it (public-facts.md). */
  answered(status: number, limits: { remaining?: number; quota?: number }): void;
  /** A 429: the install's budget is held for `waitMs`. */
  rateLimited(waitMs: number): void;
};

/**
 * A span per partner API call (contract §4.2), named by method and route template, never the URL
 * itself: ids in a path are the operator's (`/teams/{id}`), and the query may be too. The HTTP
 * attempts below it are the fetch instrumentation's spans (their URLs redacted, ./redact.ts).
 */
export function traceApiCall<T>(
  call: { method: string; route: string; installRowId?: string; priority?: string },
  work: (trace: ApiCallTrace) => Promise<T>,
): Promise<T> {
  const route = call.route;
  return inSpan(
    `partner-api ${call.method} ${route}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        "http.request.method": call.method,
        "url.template": route,
        ...(call.installRowId ? { [`${PREFIX}.install.row_id`]: call.installRowId } : {}),
        ...(call.priority ? { [`${PREFIX}.api.priority`]: call.priority } : {}),
      },
    },
    (span) => {
      let rateLimited = 0;
      return work({
        attempt: (attempt) => span.setAttribute(`${PREFIX}.api.attempts`, attempt),
        answered: (status, { remaining, quota }) => {
          span.setAttribute("http.response.status_code", status);
          if (remaining !== undefined && quota) instruments().budgetRemaining.record(Math.min(1, Math.max(0, remaining / quota)));
        },
        rateLimited: (waitMs) => {
          rateLimited += 1;
          span.setAttribute(`${PREFIX}.api.rate_limited`, rateLimited);
          span.addEvent("rate limited", { [`${PREFIX}.api.wait_ms`]: Math.round(waitMs) });
          instruments().apiRateLimited.add(1, { "url.template": route });
        },
      });
    },
  );
}

// ---- Jobs ----------------------------------------------------------------------------------------

/**
 * A span per job, with the queue, the job id, the install's row id and the attempt (1 for the
 * first), its outcome, and its duration as `<prefix>.job.duration`. pg-boss makes its own spans
 * (a CONSUMER "process" span per fetched batch, CLIENT spans for send, fetch and complete: pg-boss's
 * OpenTelemetry support, on by default); this one sits under its batch span, one per install worked.
 * `work` returns the job's outcome word.
 */
export function traceJob<R extends { outcome: string }>(job: { queue: string; id: string; installRowId?: string; attempt: number }, work: (span: Span) => Promise<R>): Promise<R> {
  const startedAt = performance.now();
  const base = { "messaging.system": "pg-boss", "messaging.destination.name": job.queue };
  let outcome = "error";
  return inSpan(
    `job ${job.queue}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        ...base,
        "messaging.message.id": job.id,
        [`${PREFIX}.job.attempt`]: job.attempt,
        ...(job.installRowId ? { [`${PREFIX}.install.row_id`]: job.installRowId } : {}),
      },
    },
    async (span) => {
      try {
        const result = await work(span);
        outcome = result.outcome;
        span.setAttribute(`${PREFIX}.job.outcome`, outcome);
        return result;
      } finally {
        instruments().jobDuration.record((performance.now() - startedAt) / 1000, { ...base, [`${PREFIX}.job.outcome`]: outcome });
      }
    },
  );
}

// ---- Token refresh -------------------------------------------------------------------------------

/**
 * A span per token refresh (contract §3), with the install's row id and its outcome, counted in
 * `<prefix>.token.refreshes`. The lock wait is an event on it (recordRefreshLockWait). The
 * outcome is decided by the caller (`outcomeOf`), which knows its own errors.
 */
export function traceRefresh<T>(installRowId: string, work: (noteOutcome: (outcome: RefreshOutcome) => void) => Promise<T>, outcomeOf: (error: unknown) => RefreshOutcome): Promise<T> {
  return inSpan("token refresh", { kind: SpanKind.INTERNAL, attributes: { [`${PREFIX}.install.row_id`]: installRowId } }, async (span) => {
    let noted: RefreshOutcome | undefined;
    let outcome: RefreshOutcome = "error";
    try {
      const result = await work((value) => (noted = value));
      outcome = noted ?? "refreshed";
      return result;
    } catch (error) {
      outcome = outcomeOf(error);
      throw error;
    } finally {
      span.setAttribute(`${PREFIX}.refresh.outcome`, outcome);
      recordRefreshOutcome(outcome);
    }
  });
}
