// The control API for tests and scripts (JSON, under /_sandbox): reset, move the clock, inspect installs,
// events, deliveries, token statistics and seed data; trigger lifecycle moves the contract describes (uninstall,
// scope widening, consumer disabled, configuration change, client re-issue/removal); inject faults into the token
// endpoint and delivery modes into webhooks; set the partner API's rate budgets, arm faults on its routes and read its
// request counters. Local development only: it has no authentication.
import { Hono } from "hono";
import type { Context } from "hono";
import { z } from "zod";
import {
  changeRequestedScopes,
  clientExists,
  flagNeedsReauth,
  normalizeRequestedScopes,
  reauthUrl,
  removeClient,
  requestedScopes,
  restoreClient,
  rotateClientSecret,
} from "./app-registration.js";
import { rateBudgetSchema } from "./api/budget.js";
import { apiFaultRequestSchema } from "./api/faults.js";
import { MAX_LIVE_CHARGES_PER_HOUR, SCOPE_PATTERN, reauthReturnUrl } from "./config.js";
import type { SandboxContext } from "./context.js";
import { findOperator } from "./context.js";
import { faultRequestSchema } from "./faults.js";
import { Checks, HANDSHAKE_ID_PATTERN } from "./handshake.js";
import { buildPortalAuthorizationUrl } from "./idp/auth-ticket.js";
import { defaultIdpBehaviour, idpBehaviourPatchSchema } from "./idp/behaviour.js";
import { installConfigPatchSchema } from "./install-config.js";
import { configOf, revokeInstall, updateInstallConfig } from "./installs.js";
import { EVENT_TYPES, WEBHOOK_EVENT_TYPES, emptyState } from "./store.js";
import type { InstallRecord } from "./store.js";
import { BULK_INSTALL_SHAPE, bulkInstallRequestSchema, createBulkInstalls } from "./bulk-installs.js";
import { energyBetaOf, setEnergyBeta } from "./energy-beta.js";
import { LIVE_SLOT_MS, slotsElapsed } from "./live.js";
import type { RecordKind } from "./operators.js";
import { RECORD_KIND_SEGMENTS, RECORD_PATCH_SHAPES, deleteRecord, patchRecord, recordPatchSchemas, restoreRecord } from "./record-edits.js";
import { craftedDeliveryRequestSchema, webhookModeRequestSchema } from "./webhooks.js";
import { alertSinkRoutes } from "./alert-sink.js";
import type { DeliveryResult } from "./webhooks.js";
import { EXTRA_LISTS } from "./lists/index.js";
import { listRecords } from "./lists/list.js";

const advanceSchema = z.object({ seconds: z.number().finite() });
/** A year either way is more skew than any test needs, and keeps Date headers and delivered_at valid dates. */
const wallSkewSchema = z.object({ seconds: z.number().int().min(-366 * 24 * 3600).max(366 * 24 * 3600) }).strict();
const consumerInstallIdSchema = z.object({ include: z.boolean() });
const reauthUrlOriginSchema = z
  .object({
    origin: z
      .url({ protocol: /^https?$/ })
      .transform((value, ctx) => {
        const url = new URL(value);
        if (url.pathname === "/" && !url.search && !url.hash) return url.origin;
        ctx.addIssue({ code: "custom", message: "an origin only: scheme://host[:port]" });
        return z.NEVER;
      })
      .nullable(),
  })
  .strict();
const installIdFilterSchema = z.coerce.number().int().positive().optional();
const eventsQuerySchema = z.object({
  type: z.enum(EVENT_TYPES).optional(),
  since: z.coerce.number().int().min(0).optional(),
  /** Events whose detail names this install (API calls, token calls, webhooks, install moves...). */
  install_id: installIdFilterSchema,
  /** Events of one install handshake (README decision 52). */
  handshake: z.string().regex(HANDSHAKE_ID_PATTERN).optional(),
});
const deliveriesQuerySchema = z.object({
  install_id: installIdFilterSchema,
  event_type: z.enum(WEBHOOK_EVENT_TYPES).optional(),
});
const deliveryIdParamSchema = z.object({ id: z.string().regex(/^whd_[A-Za-z0-9_-]{1,64}$/) });
const replayManySchema = z.object({ ids: z.array(deliveryIdParamSchema.shape.id).min(1).max(1000) }).strict();
const scopesBodySchema = z.object({ scopes: z.array(z.string().regex(SCOPE_PATTERN, "each scope must look like <resource> or <resource>:read|write|delete")).min(1).max(30) }).strict();
const rotateSecretSchema = z.object({ client_secret: z.string().min(16).max(200).optional() }).strict();
const idParamSchema = z.object({ id: z.coerce.number().int().positive() });
const apiRequestsQuerySchema = z.object({ windowSeconds: z.coerce.number().int().min(1).max(3600).optional() }).strict();
const energyBetaRequestSchema = z.object({ enabled: z.boolean(), shape: z.enum(["current", "changed"]).optional() }).strict();
const consumerStatusSchema = z.object({ status: z.enum(["active", "disabled"]) });
const liveDataRequestSchema = z
  .object({ enabled: z.boolean(), chargesPerHour: z.number().int().min(1).max(MAX_LIVE_CHARGES_PER_HOUR).optional() })
  .strict();
const recordParamsSchema = z.object({
  id: z.coerce.number().int().positive(),
  kind: z.enum(Object.keys(RECORD_KIND_SEGMENTS) as [string, ...string[]]),
  recordId: z.coerce.number().int().positive(),
});
const authorizeUrlSchema = z.object({
  operatorId: z.number().int().positive(),
  overrides: z.record(z.string(), z.string().nullable()).default({}),
});

async function readJson(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    return undefined;
  }
}

function installView(ctx: SandboxContext, install: InstallRecord) {
  const consumer = ctx.store.findConsumer(install.consumerId);
  return {
    install_id: install.installId,
    operator_id: install.operatorId,
    slug: install.slug,
    client_id: install.clientId,
    status: install.status,
    scopes: install.scopes,
    needs_reauth: install.needsReauth,
    needs_reauth_since: install.needsReauthSince,
    reauth_url: install.needsReauth ? reauthUrl(ctx, install.installId) : null,
    config: configOf(ctx, install),
    consumer_id: install.consumerId,
    consumer_status: consumer?.status ?? null,
    created_at: install.createdAt,
    updated_at: install.updatedAt,
    revoked_at: install.revokedAt,
  };
}

const ZERO_STATS = { authorizationCodeCalls: 0, refreshTokenCalls: 0, refreshesIssued: 0, chainRevocations: 0 };

/** GET /_sandbox/installs/:id/token-stats (README "Control API"). */
function tokenStatsView(ctx: SandboxContext, installId: number) {
  const stats = ctx.store.state.tokenStats[String(installId)] ?? ZERO_STATS;
  let latest: { createdAtMs: number; revokedAtMs: number | null; revokedReason: string | null } | undefined;
  for (const chain of ctx.store.chainsOfInstall(installId)) {
    if (!latest || chain.createdAtMs >= latest.createdAtMs) latest = chain;
  }
  const now = ctx.clock.nowMs();
  const activeAccessTokens = ctx.store.tokensOfInstall(installId).filter(
    ([, t]) => t.kind === "access" && t.status === "active" && t.expiresAtMs > now,
  ).length;
  return {
    install_id: installId,
    calls: { authorization_code: stats.authorizationCodeCalls, refresh_token: stats.refreshTokenCalls },
    refreshes_issued: stats.refreshesIssued,
    chain_revocations: stats.chainRevocations,
    chain_revoked: latest ? latest.revokedAtMs !== null : false,
    chain_revoked_reason: latest?.revokedReason ?? null,
    active_access_tokens: activeAccessTokens,
  };
}

/** GET/PUT/DELETE /_sandbox/installs/:id/rate-limit: the install's budget, where it comes from, and its open window. */
function installRateLimitView(ctx: SandboxContext, installId: number) {
  const budget = ctx.rateBudgets.budgetOf(installId);
  const window = ctx.rateBudgets.peek(installId, ctx.clock.nowMs());
  return {
    installId,
    limit: budget.limit,
    windowSeconds: budget.windowSeconds,
    source: ctx.rateBudgets.overrideOf(installId) ? "install" : "default",
    window: window && {
      startedAt: new Date(window.startMs).toISOString(),
      count: window.count,
      remaining: window.remaining,
      resetsInSeconds: window.resetsInSeconds,
    },
  };
}

/** GET/PUT /_sandbox/rate-limit: the default every install without its own budget has, and the overrides. */
function rateLimitView(ctx: SandboxContext) {
  return {
    rateLimit: ctx.rateBudgets.default,
    configured: ctx.config.rateLimit,
    overrides: ctx.rateBudgets.listOverrides().map(({ installId, budget }) => ({ installId, ...budget })),
  };
}

/** The 400 message for a bad API-fault request: the expected shape, then what was wrong. */
const API_FAULT_SHAPE =
  'Expected {"path": "/charges", "mode": "rate-limited" | "error500" | "error503" | "latency" | "timeout", "forMs"?: 1-3600000, "count"?: 1-100000 (at least one of them), "latencyMs"?: 0-120000 (latency), "holdMs"?: 1-120000 (timeout), "installId"?: n, "resetsIn"?: "send" | "omit" (rate-limited)}';

function deliveryResultView(result: DeliveryResult) {
  return {
    delivery_id: result.id,
    type: result.type,
    install_id: result.installId,
    mode: result.mode,
    ok: result.ok,
    attempts: result.attempts.map((a) => ({
      kind: a.kind,
      delivered_at: a.deliveredAt,
      outcome: a.outcome,
      status: a.status,
      error: a.error,
      latency_ms: a.latencyMs,
      upload_cut: a.uploadCut,
    })),
  };
}

export function controlRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();
  const bad = (c: Context, message: string) => c.json({ error: message }, 400);

  app.get("/health", (c) =>
    c.json({ ok: true, issuer: ctx.issuer(), apiBase: `${ctx.publicUrl()}/api/v1`, now: ctx.clock.now().toISOString() }),
  );

  // Whether /consumers/me names the install (an undocumented extra; the real service may not).
  app.post("/consumers/install-id", async (c) => {
    const body = consumerInstallIdSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"include": true|false}');
    ctx.consumerInstallId.include = body.data.include;
    ctx.store.addEvent("control", ctx.clock.now(), { action: body.data.include ? "consumer_install_id_on" : "consumer_install_id_off" });
    return c.json({ include: ctx.consumerInstallId.include });
  });

  // Where reauth_url points: another origin plays a spoofed or compromised service answer.
  app.get("/reauth-url-origin", (c) => c.json({ origin: ctx.reauthUrlOrigin.value }));
  app.post("/reauth-url-origin", async (c) => {
    const body = reauthUrlOriginSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"origin": "https://host[:port]"} or {"origin": null}');
    ctx.reauthUrlOrigin.value = body.data.origin;
    ctx.store.addEvent("control", ctx.clock.now(), { action: "reauth_url_origin", origin: body.data.origin });
    return c.json({ origin: ctx.reauthUrlOrigin.value });
  });

  app.post("/reset", (c) => {
    ctx.store.replaceState(emptyState());
    ctx.clock.setOffset(0);
    ctx.clock.setWallSkew(0);
    ctx.rateBudgets.reset();
    ctx.apiFaults.clear();
    ctx.apiFaults.releaseAll(); // requests a timeout fault still holds are dropped: a fresh start
    ctx.apiRequests.reset();
    ctx.refreshesInFlight.clear();
    ctx.refreshesInFlightPeak.value = 0;
    ctx.faults.clear();
    ctx.webhooks.modes.clear();
    ctx.consumerInstallId.include = true;
    ctx.idpBehaviour = defaultIdpBehaviour();
    ctx.reauthUrlOrigin.value = null;
    ctx.alertSink.clear();
    // Live data as configured, its hour slots counted from now; bulk operators and record edits went with the state.
    ctx.store.state.live = { ...ctx.operators.liveDefaults, anchorMs: ctx.clock.nowMs(), configured: { ...ctx.operators.liveDefaults } };
    ctx.operators.invalidate();
    ctx.store.addEvent("control", ctx.clock.now(), { action: "reset" });
    ctx.log("state reset: installs, tokens, codes and logs wiped; clock offset 0");
    return c.json({ ok: true });
  });

  // The app's outbound alerts land here in development and tests (decisions 50-51, sandbox/alert-sink.ts).
  app.route("/alert-sink", alertSinkRoutes(ctx));

  app.get("/clock", (c) => c.json({ now: ctx.clock.now().toISOString(), offsetSeconds: ctx.clock.offset }));

  app.post("/clock/advance", async (c) => {
    const body = advanceSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"seconds": <number>}');
    ctx.clock.advance(body.data.seconds);
    ctx.store.state.clockOffsetSeconds = ctx.clock.offset;
    ctx.store.addEvent("control", ctx.clock.now(), { action: "clock_advanced", seconds: body.data.seconds });
    return c.json({ now: ctx.clock.now().toISOString(), offsetSeconds: ctx.clock.offset });
  });

  // The service's wall clock off real time (decision 60): its Date headers and webhooks' delivered_at; not persisted.
  app.get("/wall-clock", (c) => c.json({ now: new Date(ctx.clock.wallNowMs()).toISOString(), skewSeconds: ctx.clock.wallSkewSeconds }));
  app.post("/wall-clock", async (c) => {
    const body = wallSkewSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"seconds": <whole seconds, within a year either way>}');
    ctx.clock.setWallSkew(body.data.seconds);
    ctx.store.addEvent("control", ctx.clock.now(), { action: "wall_clock_skewed", seconds: body.data.seconds });
    return c.json({ now: new Date(ctx.clock.wallNowMs()).toISOString(), skewSeconds: ctx.clock.wallSkewSeconds });
  });

  app.get("/installs", (c) => c.json({ installs: ctx.store.state.installs.map((install) => installView(ctx, install)) }));

  app.post("/installs/:id/revoke", async (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    if (!params.success) return bad(c, "install id must be a positive integer");
    const revoked = await revokeInstall(ctx, params.data.id, "control");
    if (!revoked) return c.json({ error: "no active install with this id" }, 404);
    return c.json({ install: installView(ctx, revoked) });
  });

  // Simulates "the app owner widened the app's scopes" (contract §3): every API call of the install gets 403 NEEDS_REAUTH.
  app.post("/installs/:id/flag-reauth", (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    const install = params.success ? ctx.store.findInstall(params.data.id) : undefined;
    if (!install || install.status !== "active") return c.json({ error: "no active install with this id" }, 404);
    flagNeedsReauth(ctx, install, "control");
    return c.json({ install: installView(ctx, install) });
  });

  app.post("/installs/:id/consumer", async (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    const body = consumerStatusSchema.safeParse(await readJson(c));
    if (!params.success || !body.success) return bad(c, 'Expected /installs/<id>/consumer with {"status":"active"|"disabled"}');
    const install = ctx.store.findInstall(params.data.id);
    const consumer = install ? ctx.store.findConsumer(install.consumerId) : undefined;
    if (!install || !consumer) return c.json({ error: "no install with this id" }, 404);
    consumer.status = body.data.status;
    consumer.updatedAt = ctx.clock.now().toISOString();
    ctx.store.addEvent("install", ctx.clock.now(), { action: `consumer_${body.data.status}`, install_id: install.installId, operator_id: install.operatorId });
    return c.json({ install: installView(ctx, install) });
  });

  app.get("/events", (c) => {
    const query = eventsQuerySchema.safeParse(c.req.query());
    if (!query.success) return bad(c, `type must be one of: ${EVENT_TYPES.join(", ")}; install_id a positive integer; handshake an id hs_…`);
    const { type, since, install_id: installId, handshake } = query.data;
    const events = ctx.store.state.events.filter(
      (e) =>
        (!type || e.type === type) &&
        (since === undefined || e.seq > since) &&
        (installId === undefined || e.detail.install_id === installId) &&
        (handshake === undefined || e.detail.handshake === handshake),
    );
    return c.json({ events });
  });

  // ----- webhooks: delivery log, replay, delivery modes -----

  app.get("/deliveries", (c) => {
    const query = deliveriesQuerySchema.safeParse(c.req.query());
    if (!query.success) return bad(c, `install_id must be a positive integer; event_type one of: ${WEBHOOK_EVENT_TYPES.join(", ")}`);
    const { install_id: installId, event_type: eventType } = query.data;
    const deliveries = ctx.store.state.events.filter(
      (e) => e.type === "webhook" && (installId === undefined || e.detail.install_id === installId) && (!eventType || e.detail.event_type === eventType),
    );
    return c.json({ deliveries });
  });

  app.get("/deliveries/:id", (c) => {
    const params = deliveryIdParamSchema.safeParse(c.req.param());
    const delivery = params.success ? ctx.store.findDelivery(params.data.id) : undefined;
    if (!delivery) return c.json({ error: "unknown delivery id (only the newest 1,000 deliveries are kept)" }, 404);
    const attempts = ctx.store.state.events.filter((e) => e.type === "webhook" && e.detail.delivery_id === delivery.id);
    return c.json({ delivery: { id: delivery.id, type: delivery.type, data: delivery.data, created_at: delivery.createdAt }, attempts });
  });

  // Contract §6: "The service can replay deliveries for an app on request." Same id and data, a new delivered_at.
  app.post("/deliveries/:id/replay", async (c) => {
    const params = deliveryIdParamSchema.safeParse(c.req.param());
    if (!params.success) return c.json({ error: "unknown delivery id" }, 404);
    const result = await ctx.webhooks.replay(params.data.id);
    if (!result) return c.json({ error: "unknown delivery id (only the newest 1,000 deliveries are kept)" }, 404);
    return c.json(deliveryResultView(result));
  });

  // README decision 58: the delivery an eavesdropper captured, sent again byte for byte (same delivered_at and signature).
  app.post("/deliveries/:id/resend-captured", async (c) => {
    const params = deliveryIdParamSchema.safeParse(c.req.param());
    if (!params.success) return c.json({ error: "unknown delivery id" }, 404);
    const result = await ctx.webhooks.resendCaptured(params.data.id);
    if (!result) return c.json({ error: "unknown delivery id (only the newest 1,000 deliveries are kept)" }, 404);
    return c.json(deliveryResultView(result));
  });

  // README decision 58: a delivery the service would never send (forged, unsigned, stale, future-dated, oversize), for
  // conformance runs that judge the app's webhook endpoint without holding its secret.
  app.post("/webhooks/craft", async (c) => {
    const body = craftedDeliveryRequestSchema.safeParse(await readJson(c));
    if (!body.success) {
      return bad(
        c,
        `Expected {"type": ${WEBHOOK_EVENT_TYPES.map((t) => `"${t}"`).join(" | ")}, "data": {"install_id": n, "operator_id": n, …}, "signature"?: "valid" | "forged" | "missing", "deliveredAtOffsetSeconds"?: n, "padBytes"?: n ≤ 8 MiB}: ${body.error.issues.map((i) => i.message).join("; ")}`,
      );
    }
    return c.json(deliveryResultView(await ctx.webhooks.sendCrafted(body.data)));
  });

  // Contract §5.7/§6: replaying many deliveries on request sends them as a burst. The sandbox sends
  // them all at once (every POST in flight together), the hardest way a backlog can arrive.
  app.post("/deliveries/replay", async (c) => {
    const body = replayManySchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"ids": ["whd_…", …]} with 1 to 1,000 delivery ids');
    const unknown = body.data.ids.filter((id) => !ctx.store.findDelivery(id));
    if (unknown.length > 0) return c.json({ error: "unknown delivery ids (only the newest 1,000 deliveries are kept); nothing was sent", unknown }, 404);
    const results = await Promise.all(body.data.ids.map((id) => ctx.webhooks.replay(id)));
    const statuses: Record<string, number> = {};
    for (const attempt of results.flatMap((r) => r?.attempts ?? [])) {
      const key = attempt.status === null ? "no_answer" : String(attempt.status);
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
    const delivered = results.filter((r) => r?.ok).length;
    return c.json({ replayed: results.length, delivered, failed: results.length - delivered, statuses });
  });

  app.get("/webhook-modes", (c) => c.json({ modes: ctx.webhooks.modes.list() }));

  app.post("/webhook-modes", async (c) => {
    const body = webhookModeRequestSchema.safeParse(await readJson(c));
    if (!body.success) {
      return bad(c, `Expected {"type": ${WEBHOOK_EVENT_TYPES.map((t) => `"${t}"`).join(" | ")}, "mode": "drop" | "late" | "twice", "count"?: n ≥ 1, "lateSeconds"?: n (late only)}: ${body.error.issues.map((i) => i.message).join("; ")}`);
    }
    const armed = ctx.webhooks.modes.arm(body.data);
    ctx.store.addEvent("control", ctx.clock.now(), { action: "webhook_mode_armed", event_type: armed.type, mode: armed.mode, count: armed.remaining });
    return c.json({ armed, modes: ctx.webhooks.modes.list() });
  });

  app.delete("/webhook-modes", (c) => {
    ctx.webhooks.modes.clear();
    ctx.store.addEvent("control", ctx.clock.now(), { action: "webhook_modes_cleared" });
    return c.json({ modes: [] });
  });

  // ----- token endpoint: statistics and fault injection -----

  app.get("/installs/:id/token-stats", (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    const install = params.success ? ctx.store.findInstall(params.data.id) : undefined;
    if (!install) return c.json({ error: "no install with this id" }, 404);
    return c.json(tokenStatsView(ctx, install.installId));
  });

  app.get("/token-stats", (c) => {
    const per = ctx.store.state.installs.map((install) => tokenStatsView(ctx, install.installId));
    const sum = (pick: (s: ReturnType<typeof tokenStatsView>) => number): number => per.reduce((total, s) => total + pick(s), 0);
    return c.json({
      installs: per.length,
      calls: { authorization_code: sum((s) => s.calls.authorization_code), refresh_token: sum((s) => s.calls.refresh_token) },
      refreshes_issued: sum((s) => s.refreshes_issued),
      chain_revocations: sum((s) => s.chain_revocations),
      chains_revoked: per.filter((s) => s.chain_revoked).length,
      active_access_tokens: sum((s) => s.active_access_tokens),
      unattributed_calls: ctx.store.state.unattributedTokenCalls,
      // How hard the app leans on the identity provider: refreshes being processed now, and the most at once.
      refreshes_in_flight: ctx.refreshesInFlight.size,
      max_refreshes_in_flight: ctx.refreshesInFlightPeak.value,
    });
  });

  app.get("/faults", (c) => c.json({ tokenEndpoint: ctx.faults.current() }));

  app.post("/faults", async (c) => {
    const body = faultRequestSchema.safeParse(await readJson(c));
    if (!body.success) {
      return bad(
        c,
        `Expected {"tokenEndpoint": {"mode": "delay" | "error500" | "drop-connection" | "answer-then-fail", "count"?: n ≥ 1, "delayMs"?: n, "failWith"?: "error500" | "drop-connection", "grantType"?: "refresh_token" | "authorization_code"}}: ${body.error.issues.map((i) => i.message).join("; ")}`,
      );
    }
    const armed = ctx.faults.arm(body.data);
    ctx.store.addEvent("control", ctx.clock.now(), { action: "fault_armed", mode: armed.mode, grant_type: armed.grantType, count: armed.remaining });
    return c.json({ tokenEndpoint: armed });
  });

  app.delete("/faults", (c) => {
    ctx.faults.clear();
    ctx.store.addEvent("control", ctx.clock.now(), { action: "faults_cleared" });
    return c.json({ tokenEndpoint: null });
  });

  // ----- the partner API: rate budgets, faults per route, request counters -----

  app.get("/rate-limit", (c) => c.json(rateLimitView(ctx)));

  // Contract §8's default budget for every install without its own (decision 36); /reset restores the configured one.
  app.put("/rate-limit", async (c) => {
    const body = rateBudgetSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, `Expected {"limit": 1-100000, "windowSeconds": 1-3600} (integers): ${body.error.issues.map((i) => i.message).join("; ")}`);
    ctx.rateBudgets.setDefault(body.data);
    ctx.store.addEvent("control", ctx.clock.now(), { action: "rate_limit_default", limit: body.data.limit, window_seconds: body.data.windowSeconds });
    return c.json(rateLimitView(ctx));
  });

  const knownInstall = (c: Context): InstallRecord | undefined => {
    const params = idParamSchema.safeParse(c.req.param());
    return params.success ? ctx.store.findInstall(params.data.id) : undefined;
  };

  app.get("/installs/:id/rate-limit", (c) => {
    const install = knownInstall(c);
    if (!install) return c.json({ error: "no install with this id" }, 404);
    return c.json(installRateLimitView(ctx, install.installId));
  });

  // One install's own budget; it applies at once, to the window already open (decision 36).
  app.put("/installs/:id/rate-limit", async (c) => {
    const install = knownInstall(c);
    if (!install) return c.json({ error: "no install with this id" }, 404);
    const body = rateBudgetSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, `Expected {"limit": 1-100000, "windowSeconds": 1-3600} (integers): ${body.error.issues.map((i) => i.message).join("; ")}`);
    ctx.rateBudgets.setOverride(install.installId, body.data);
    ctx.store.addEvent("control", ctx.clock.now(), {
      action: "rate_limit_install",
      install_id: install.installId,
      limit: body.data.limit,
      window_seconds: body.data.windowSeconds,
    });
    return c.json(installRateLimitView(ctx, install.installId));
  });

  app.delete("/installs/:id/rate-limit", (c) => {
    const install = knownInstall(c);
    if (!install) return c.json({ error: "no install with this id" }, 404);
    ctx.rateBudgets.clearOverride(install.installId);
    ctx.store.addEvent("control", ctx.clock.now(), { action: "rate_limit_install_cleared", install_id: install.installId });
    return c.json(installRateLimitView(ctx, install.installId));
  });

  // `held`: requests a latency or timeout fault is holding right now (each ends when its client gives up or its time is over).
  app.get("/api-faults", (c) => c.json({ faults: ctx.apiFaults.list(), held: ctx.apiFaults.heldCount }));

  // Contract §8 "clients apply backoff": a 429 storm, a 5xx storm, slow or unanswered requests on one route, for a while.
  app.post("/api-faults", async (c) => {
    const body = apiFaultRequestSchema.safeParse(await readJson(c));
    if (!body.success) {
      return bad(c, `${API_FAULT_SHAPE}: ${body.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ")}`);
    }
    const armed = ctx.apiFaults.arm(body.data);
    ctx.store.addEvent("control", ctx.clock.now(), {
      action: "api_fault_armed",
      fault_id: armed.id,
      path: armed.path,
      mode: armed.mode,
      install_id: armed.installId,
      count: armed.remaining,
      expires_at: armed.expiresAt,
    });
    return c.json({ armed, faults: ctx.apiFaults.list() });
  });

  app.delete("/api-faults", (c) => {
    ctx.apiFaults.clear();
    ctx.store.addEvent("control", ctx.clock.now(), { action: "api_faults_cleared" });
    return c.json({ faults: [] });
  });

  app.delete("/api-faults/:id", (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    if (!params.success || !ctx.apiFaults.remove(params.data.id)) return c.json({ error: "no armed API fault with this id" }, 404);
    ctx.store.addEvent("control", ctx.clock.now(), { action: "api_fault_cleared", fault_id: params.data.id });
    return c.json({ faults: ctx.apiFaults.list() });
  });

  // Counts, not times (decision 38): how many requests, how answered, refused per window, and the busiest span.
  app.get("/installs/:id/api-requests", (c) => {
    const install = knownInstall(c);
    if (!install) return c.json({ error: "no install with this id" }, 404);
    const query = apiRequestsQuerySchema.safeParse(c.req.query());
    if (!query.success) return bad(c, "windowSeconds (the span of peakInAnyWindow; default the install's window) must be an integer between 1 and 3600");
    const span = query.data.windowSeconds ?? ctx.rateBudgets.budgetOf(install.installId).windowSeconds;
    return c.json(ctx.apiRequests.view(install.installId, span));
  });

  // Between phases of a test: this install counts from zero again. Its budget and open window are untouched.
  app.delete("/installs/:id/api-requests", (c) => {
    const install = knownInstall(c);
    if (!install) return c.json({ error: "no install with this id" }, 404);
    ctx.apiRequests.clear(install.installId);
    return c.json(ctx.apiRequests.view(install.installId, ctx.rateBudgets.budgetOf(install.installId).windowSeconds));
  });

  // ----- the identity provider's behaviour: another server than Hydra, or one that is away -----

  app.get("/idp-behaviour", (c) => c.json({ idpBehaviour: ctx.idpBehaviour }));

  app.post("/idp-behaviour", async (c) => {
    const body = idpBehaviourPatchSchema.safeParse(await readJson(c));
    if (!body.success) {
      return bad(
        c,
        `Expected any of {"discovery": "up" | "503" | "404", "errorWording": "hydra" | "generic", "iss": "send" | "omit" | "wrong", "omitScope": boolean, "omitExpiresIn": boolean}: ${body.error.issues.map((i) => i.message).join("; ")}`,
      );
    }
    ctx.idpBehaviour = { ...ctx.idpBehaviour, ...body.data };
    ctx.store.addEvent("control", ctx.clock.now(), { action: "idp_behaviour_changed", ...body.data });
    ctx.log(`identity provider behaviour: ${JSON.stringify(ctx.idpBehaviour)}`);
    return c.json({ idpBehaviour: ctx.idpBehaviour });
  });

  // ----- the app's registration: client credentials and requested scopes -----

  const clientView = () => ({
    client_id: ctx.config.client.clientId,
    exists: clientExists(ctx),
    secret: ctx.store.state.app.clientSecretHash === null ? "configured" : "re-issued",
    secret_rotated_at: ctx.store.state.app.clientSecretRotatedAt,
  });

  app.get("/clients", (c) => c.json({ client: clientView() }));

  // The service operator re-issues the client (contract §5.7, §7): a new secret; the old one fails at once.
  app.post("/clients/rotate-secret", async (c) => {
    const text = await c.req.text();
    let raw: unknown = {};
    if (text.trim() !== "") {
      try {
        raw = JSON.parse(text);
      } catch {
        raw = null;
      }
    }
    const body = rotateSecretSchema.safeParse(raw);
    if (!body.success) return bad(c, 'Expected no body, or {"client_secret": "<16 to 200 characters>"}');
    const secret = rotateClientSecret(ctx, body.data.client_secret);
    return c.json({ client_id: ctx.config.client.clientId, client_secret: secret });
  });

  app.post("/clients/remove", (c) => {
    removeClient(ctx);
    return c.json({ client: clientView() });
  });

  app.post("/clients/restore", (c) => {
    restoreClient(ctx);
    return c.json({ client: clientView() });
  });

  app.get("/app", (c) =>
    c.json({
      app_name: ctx.config.client.appName,
      client_id: ctx.config.client.clientId,
      redirect_uri: ctx.config.client.redirectUri,
      requested_scopes: requestedScopes(ctx),
      scopes_changed_at: ctx.store.state.app.scopesChangedAt,
      reauth_return_url: reauthReturnUrl(ctx.config),
    }),
  );

  // The app owner changes the requested scopes (as the console does). Widening flags every active install.
  app.post("/app/scopes", async (c) => {
    const body = scopesBodySchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, `Expected {"scopes": ["<resource>[:read|write|delete]", ...]}: ${body.error.issues.map((i) => i.message).join("; ")}`);
    if (normalizeRequestedScopes(body.data.scopes).length === 0) return bad(c, "list at least one scope besides offline_access");
    const change = changeRequestedScopes(ctx, body.data.scopes, "control");
    return c.json({
      previous: change.previous,
      requested_scopes: change.requested,
      added: change.added,
      removed: change.removed,
      widened: change.widened,
      flagged_install_ids: change.flaggedInstallIds,
    });
  });

  // The operator saves the per-install configuration (as the catalogue page does): install.config.updated is sent.
  app.post("/installs/:id/config", async (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    const body = installConfigPatchSchema.safeParse(await readJson(c));
    if (!params.success || !body.success) {
      return bad(c, 'Expected /installs/<id>/config with {"siteIds"?: [int], "syncCharges"?: boolean, "currency"?: "EUR" | "NOK" | "SEK" | "DKK" | "CHF" | "GBP"}');
    }
    const result = await updateInstallConfig(ctx, params.data.id, body.data, "control");
    if (!result.ok) return c.json({ error: result.message }, result.status);
    return c.json({ install: installView(ctx, result.install), delivery: deliveryResultView(result.delivery) });
  });

  app.get("/operators", (c) =>
    c.json({
      operators: ctx.operators.listOperators().map((operator) => {
        const counts = ctx.operators.counts(operator.id)!;
        return {
          id: operator.id,
          name: operator.name,
          slug: operator.slug,
          chargePointCount: counts.chargePoints,
          chargeCount: counts.charges,
          teamCount: counts.teams,
        };
      }),
    }),
  );

  // The operator's whole lists as the API shows them now (seed, live data, edits), for tests to compare with the app's copy.
  for (const [segment, kind] of Object.entries(RECORD_KIND_SEGMENTS)) {
    app.get(`/operators/:id/${segment}`, (c) => {
      const params = idParamSchema.safeParse(c.req.param());
      const data = params.success ? findOperator(ctx, params.data.id) : undefined;
      if (!data) return c.json({ error: "unknown operator" }, 404);
      return c.json({ operatorId: data.operator.id, total: data[kind].length, data: data[kind] });
    });
  }
  // The same for a fork's extra read-only lists (lists/index.ts).
  for (const list of EXTRA_LISTS) {
    app.get(`/operators/:id${list.path}`, (c) => {
      const params = idParamSchema.safeParse(c.req.param());
      const data = params.success ? findOperator(ctx, params.data.id) : undefined;
      if (!data) return c.json({ error: "unknown operator" }, 404);
      const records = listRecords(list, data);
      return c.json({ operatorId: data.operator.id, total: records.length, data: records });
    });
  }

  // ----- records deleted and changed, for deletion-detection tests (decision 44) -----

  type RecordTarget = { error: Response } | { operatorId: number; kind: RecordKind; recordId: number };
  const recordTarget = (c: Context): RecordTarget => {
    const params = recordParamsSchema.safeParse(c.req.param());
    if (!params.success) return { error: bad(c, "Expected /operators/<operator id>/charge-points|charges|teams/<record id> with positive integer ids") };
    if (!ctx.operators.describe(params.data.id)) return { error: c.json({ error: "unknown operator" }, 404) };
    return { operatorId: params.data.id, kind: RECORD_KIND_SEGMENTS[params.data.kind]!, recordId: params.data.recordId };
  };

  app.delete("/operators/:id/:kind/:recordId", (c) => {
    const target = recordTarget(c);
    if ("error" in target) return target.error;
    const outcome = deleteRecord(ctx, target.operatorId, target.kind, target.recordId);
    if (!outcome.ok) return c.json({ error: outcome.message }, outcome.status);
    return c.json({ deleted: { operatorId: target.operatorId, kind: target.kind, id: target.recordId } });
  });

  app.post("/operators/:id/:kind/:recordId/restore", (c) => {
    const target = recordTarget(c);
    if ("error" in target) return target.error;
    const outcome = restoreRecord(ctx, target.operatorId, target.kind, target.recordId);
    if (!outcome.ok) return c.json({ error: outcome.message }, outcome.status);
    return c.json({ record: outcome.record });
  });

  app.patch("/operators/:id/:kind/:recordId", async (c) => {
    const target = recordTarget(c);
    if ("error" in target) return target.error;
    const body = recordPatchSchemas[target.kind].safeParse(await readJson(c));
    if (!body.success || Object.keys(body.data).length === 0) {
      const issues = body.success ? "no field given" : body.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
      return bad(c, `Expected ${RECORD_PATCH_SHAPES[target.kind]}: ${issues}`);
    }
    const outcome = patchRecord(ctx, target.operatorId, target.kind, target.recordId, body.data as Record<string, string | number | boolean | null>);
    if (!outcome.ok) return c.json({ error: outcome.message }, outcome.status);
    return c.json({ record: outcome.record });
  });

  // ----- the EVSE charge-history beta per operator (decision 47) -----

  app.get("/operators/:id/energy-beta", (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    if (!params.success || !ctx.operators.describe(params.data.id)) return c.json({ error: "unknown operator" }, 404);
    return c.json({ operatorId: params.data.id, ...energyBetaOf(ctx, params.data.id) });
  });

  app.put("/operators/:id/energy-beta", async (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    if (!params.success || !ctx.operators.describe(params.data.id)) return c.json({ error: "unknown operator" }, 404);
    const body = energyBetaRequestSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"enabled": true | false, "shape"?: "current" | "changed"}');
    return c.json({ operatorId: params.data.id, ...setEnergyBeta(ctx, params.data.id, body.data, "control") });
  });

  // ----- data that moves with the clock (decision 43) -----

  const liveView = () => {
    const setting = ctx.operators.liveSetting();
    return {
      enabled: setting.enabled,
      chargesPerHour: setting.chargesPerHour,
      anchor: new Date(setting.anchorMs).toISOString(),
      slotHours: LIVE_SLOT_MS / 3_600_000,
      slotsElapsed: slotsElapsed(setting, ctx.clock.nowMs()),
      configured: ctx.operators.liveDefaults,
    };
  };

  app.get("/live-data", (c) => c.json(liveView()));

  // Switching on (or changing the rate) anchors the hour slots at the current clock: same settings, same data.
  app.post("/live-data", async (c) => {
    const body = liveDataRequestSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, `Expected {"enabled": true | false, "chargesPerHour"?: 1-${MAX_LIVE_CHARGES_PER_HOUR}}: ${body.error.issues.map((i) => i.message).join("; ")}`);
    const current = ctx.operators.liveSetting();
    const chargesPerHour = body.data.chargesPerHour ?? current.chargesPerHour;
    const unchanged = current.enabled === body.data.enabled && current.chargesPerHour === chargesPerHour;
    if (!unchanged) ctx.store.state.live = { enabled: body.data.enabled, chargesPerHour, anchorMs: ctx.clock.nowMs(), configured: { ...ctx.operators.liveDefaults } };
    ctx.operators.invalidate();
    ctx.store.addEvent("control", ctx.clock.now(), { action: "live_data", enabled: body.data.enabled, charges_per_hour: chargesPerHour });
    return c.json(liveView());
  });

  // ----- many operators with installs and tokens in one call (decision 41) -----

  app.post("/bulk-installs", async (c) => {
    const body = bulkInstallRequestSchema.safeParse(await readJson(c));
    if (!body.success) {
      return bad(c, `${BULK_INSTALL_SHAPE}: ${body.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ")}`);
    }
    const result = await createBulkInstalls(ctx, body.data);
    if (!result.ok) return bad(c, result.message);
    // Tokens in a response: only here, a test fixture answering on loopback (bulk-installs.ts).
    return c.json({ count: result.installs.length, installs: result.installs, webhooks: result.webhooks });
  });

  // ----- persistence: how much the store wrote (decision 42) -----

  app.get("/persistence", async (c) => {
    if (c.req.query("flush") === "1") await ctx.store.flush();
    return c.json(ctx.store.persistenceStats());
  });

  // Builds a portal-signed authorization URL, optionally with changed parameters, so conformance tests can
  // exercise the authorization endpoint's own checks (redirect_uri, scope, code_challenge...).
  app.post("/authorize-url", async (c) => {
    const body = authorizeUrlSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"operatorId": <int>, "overrides"?: {"param": "value" | null}}');
    const operator = findOperator(ctx, body.data.operatorId);
    if (!operator) return c.json({ error: "unknown operator" }, 404);
    const checks = new Checks();
    checks.pass(`operator known: ${operator.operator.name}`);
    return c.json({ url: buildPortalAuthorizationUrl(ctx, body.data.operatorId, body.data.overrides, "connect", { by: "control", checks }) });
  });

  return app;
}
