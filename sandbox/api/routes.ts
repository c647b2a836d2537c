// The partner API under /api/v1 (contract §4.2). Every request: Authorization: Bearer <access token>,
// introspected server-side on each call (contract §5.4), resolved to the install's consumer, then checked
// for the install's rate budget, consumer status, re-authorization state and granted scopes, in that order.
// Between the token and the budget, an armed API fault (api/faults.ts) may answer instead; every request of a
// resolved token is counted for its install (api/counters.ts).
import { Hono } from "hono";
import type { Context } from "hono";
import { z } from "zod";
import { clientExists, reauthUrl } from "../app-registration.js";
import type { SandboxContext } from "../context.js";
import { findOperator } from "../context.js";
import { dropConnection } from "../drop-connection.js";
import { sha256Hex } from "../crypto.js";
import { Checks } from "../handshake.js";
import { findToken, handshakeOfChain } from "../idp/tokens.js";
import { energyBetaOf, energyHistoryBody, energyPathSchema, energyQuerySchema, findEvse } from "../energy-beta.js";
import { patchRecord } from "../record-edits.js";
import { allowsRead, allowsWrite } from "../scopes.js";
import type { OperatorData } from "../seed.js";
import type { ConsumerRecord, InstallRecord } from "../store.js";
import type { RateBudget } from "./budget.js";
import { ApiError, apiErrors } from "./errors.js";
import type { AppliedApiFault, HoldOutcome } from "./faults.js";
import { EXTRA_LISTS } from "../lists/index.js";
import { listRecords } from "../lists/list.js";

interface Caller {
  install: InstallRecord;
  consumer: ConsumerRecord;
  operator: OperatorData;
}

/** A read or a write needs one of these scopes. */
interface ScopeRule {
  /** Resource name whose R, R:read or R:write grants the read; only R:write grants a write (README decisions 12, 45). */
  resource: string;
  /** Default "read". */
  access?: "read" | "write";
  /** The scope named in a 403, the one an app should request. */
  display: string;
}

const pageQuerySchema = z.object({
  page: z
    .string()
    .regex(/^\d+$/, "page must be an integer ≥ 0")
    .transform(Number)
    .pipe(z.number().int().min(0, "page must be an integer ≥ 0").max(2_147_483_647, "page is too large"))
    .default(0),
  perPage: z
    .string()
    .regex(/^\d+$/, "perPage must be an integer between 1 and 100")
    .transform(Number)
    .pipe(z.number().int().min(1, "perPage must be an integer between 1 and 100").max(100, "perPage must be an integer between 1 and 100"))
    .default(10),
});

function paginate<T>(c: Context, items: readonly T[]): { data: T[]; meta: Record<string, number> } {
  const parsed = pageQuerySchema.safeParse(c.req.query());
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw apiErrors.badRequest(issue?.message ?? "Bad query", String(issue?.path[0] ?? "query"));
  }
  const { page, perPage } = parsed.data;
  const data = items.slice(page * perPage, page * perPage + perPage);
  return {
    data,
    meta: {
      currentPage: page,
      perPage,
      itemCount: data.length,
      totalPageCount: Math.ceil(items.length / perPage),
      totalItemCount: items.length,
    },
  };
}

/** A team id in a path: the int64 of public-facts.md "Team". */
const teamIdSchema = z.string().regex(/^[1-9]\d{0,18}$/, "teamId must be a positive integer").transform(Number);

/**
 * README decision 45: the body of PATCH /teams/{id}. Only `name` may change (a team's `type` is the service's business);
 * trimmed, 1 to 100 characters, no control characters. Unknown fields are refused, so a typo is not silently ignored.
 */
const teamPatchSchema = z
  .object({
    name: z
      .string({ message: "name must be a string" })
      .trim()
      .min(1, "name must not be empty")
      .max(100, "name must be at most 100 characters")
      .refine((name) => !/\p{Cc}/u.test(name), "name must not contain control characters"),
  })
  .strict();

/** The request body as JSON, or a 400 the caller can act on. */
async function readJsonBody(c: Context): Promise<unknown> {
  if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("application/json")) throw apiErrors.badRequest("Send the body as application/json", "body");
  try {
    return await c.req.json();
  } catch {
    throw apiErrors.badRequest("The body is not valid JSON", "body");
  }
}

/** Where apiRoutes is mounted; API-fault paths are relative to it. */
const API_BASE = "/api/v1";

/** A refused access token the sandbox still knows (README decision 57): whose it was, and why it no longer works. */
interface RefusedToken {
  installId: number | null;
  state: "deleted" | "revoked" | "expired" | null;
}

function numberOrNull(value: string | null): number | null {
  const parsed = value === null ? Number.NaN : Number(value);
  return Number.isFinite(parsed) ? parsed : null;
}

export function apiRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();

  /** The RateLimit-* headers of public-facts.md; `resetsInSeconds` null leaves RateLimit-ResetsIn out. */
  function setRateLimitHeaders(c: Context, budget: RateBudget, remaining: number, resetsInSeconds: number | null): void {
    c.header("RateLimit-Policy", `${budget.limit};w=${budget.windowSeconds}`);
    c.header("RateLimit-Quota", String(budget.limit));
    c.header("RateLimit-TimeWindow", String(budget.windowSeconds));
    c.header("RateLimit-Remaining", String(remaining));
    if (resetsInSeconds !== null) c.header("RateLimit-ResetsIn", String(resetsInSeconds));
  }

  /**
   * Contract §8: a budget per install (default 1,000 requests per 60 seconds), enforced as a fixed window on the
   * sandbox clock (api/budget.ts, README decisions 14 and 36). Counts the request; over the budget, 429 without
   * Retry-After (public-facts.md).
   */
  function applyRateLimit(c: Context, installId: number): void {
    const decision = ctx.rateBudgets.take(installId, ctx.clock.nowMs());
    ctx.apiRequests.counted(installId, decision.windowStartMs, decision.limited);
    setRateLimitHeaders(c, decision, decision.remaining, decision.resetsInSeconds);
    if (decision.limited) throw apiErrors.rateLimited(decision.resetsInSeconds);
  }

  /**
   * Contract §5.4: the token is introspected on every call. Anything but a live access token of an active install is 401.
   * Returns the install and the token's chain (whose handshake an identity call names: README decision 52).
   */
  function resolveInstall(c: Context, checks: Checks, refused: RefusedToken): { install: InstallRecord; chainId: string } {
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const presented = match?.[1];
    if (!presented) {
      checks.fail("Authorization: Bearer <access token> is present");
      throw apiErrors.invalidAccessToken();
    }
    checks.pass("Authorization: Bearer <access token> is present");
    const found = findToken(ctx, presented, "access");
    if (!found || found.token.status !== "active" || found.token.expiresAtMs <= ctx.clock.nowMs()) {
      checks.fail("the access token is known, active and unexpired (introspected on every call)");
      // Whose token it was, when the sandbox knows (README decision 57): "0 calls with the old tokens" after an
      // uninstall is then a count. The install is named in its own field, not install_id: the call is nobody's.
      refused.installId = found ? found.token.installId : (ctx.store.installOfDeletedToken(sha256Hex(presented)) ?? null);
      refused.state = !found ? (refused.installId === null ? null : "deleted") : found.token.status !== "active" ? "revoked" : "expired";
      throw apiErrors.invalidAccessToken();
    }
    checks.pass("the access token is known, active and unexpired (introspected on every call)");
    // A client removed from the identity provider has no valid tokens while it is gone (README decision 26).
    if (!checks.verify(clientExists(ctx), "the app's client is still registered")) throw apiErrors.invalidAccessToken();
    const install = ctx.store.findInstall(found.token.installId);
    if (!install || install.status !== "active") {
      checks.fail("the install is active");
      throw apiErrors.invalidAccessToken();
    }
    checks.pass("the install is active");
    return { install, chainId: found.token.chainId };
  }

  /** After the token: rate limit, consumer status, re-authorization flag, scope, in that order (README decision 29). */
  function admit(c: Context, install: InstallRecord, rule: ScopeRule | null, checks: Checks): Caller {
    const budget = ctx.rateBudgets.budgetOf(install.installId);
    try {
      applyRateLimit(c, install.installId);
    } catch (error) {
      checks.fail(`within the install's rate budget (${budget.limit} per ${budget.windowSeconds} s)`);
      throw error;
    }
    checks.pass(`within the install's rate budget (${budget.limit} per ${budget.windowSeconds} s)`);
    const consumer = ctx.store.findConsumer(install.consumerId);
    if (!consumer || consumer.status !== "active") {
      checks.fail("the install's consumer is active");
      throw apiErrors.consumerNotFound();
    }
    checks.pass("the install's consumer is active");
    if (!checks.verify(!install.needsReauth, "the install is not flagged for re-authorization (NEEDS_REAUTH)")) {
      throw apiErrors.needsReauth(install.installId, ctx.config.client.appName, reauthUrl(ctx, install.installId));
    }
    // The consumer's scopes follow the install, so a re-consent widens existing tokens too (contract §3).
    if (rule && !checks.verify((rule.access === "write" ? allowsWrite : allowsRead)(consumer.scopes, rule.resource), `the install's granted scopes allow this (${rule.display})`)) {
      throw apiErrors.accessForbidden(rule.display);
    }
    const operator = findOperator(ctx, install.operatorId);
    if (!operator) throw apiErrors.invalidAccessToken();
    return { install, consumer, operator };
  }

  /**
   * An armed API fault answering in the service's place (api/faults.ts, README decision 37): a gateway in front of the
   * limiter, so the install's budget is not spent. Always throws the answer.
   */
  function throwFaultAnswer(c: Context, install: InstallRecord, fault: Extract<AppliedApiFault, { mode: "rate-limited" | "error500" | "error503" }>): never {
    switch (fault.mode) {
      case "rate-limited":
        // As the limiter's own 429: nothing left, and when to come back only if the fault is set to say so.
        setRateLimitHeaders(c, ctx.rateBudgets.budgetOf(install.installId), 0, fault.resetsInSeconds);
        throw apiErrors.rateLimited(fault.resetsInSeconds);
      case "error500":
        throw apiErrors.internalError();
      case "error503":
        throw apiErrors.serviceUnavailable();
    }
  }

  /**
   * Wraps a handler: resolve the token, apply an armed fault, admit, run, map errors; then log method/path/install/
   * status to the event log and count the request for the install (api/counters.ts).
   * `identity`: the handshake's own call (GET /consumers/me): its event also lists what was checked and names the
   * handshake of the token's chain (README decision 52). Other calls leave both out: a sync makes thousands.
   */
  function route(rule: ScopeRule | null, handler: (c: Context, caller: Caller) => Response | Promise<Response>, options: { identity?: boolean } = {}) {
    return async (c: Context): Promise<Response> => {
      const url = new URL(c.req.url);
      let installId: number | null = null;
      let fault: AppliedApiFault | null = null;
      let errorCode: string | null = null;
      // null: no answer; the connection is dropped.
      let response: Response | null = null;
      // How a latency or timeout fault's wait ended (null: none waited).
      let held: HoldOutcome | null = null;
      const checks = new Checks();
      let handshake: string | null = null;
      const refused: RefusedToken = { installId: null, state: null };
      try {
        const { install, chainId } = resolveInstall(c, checks, refused);
        installId = install.installId;
        handshake = handshakeOfChain(ctx, chainId);
        ctx.apiRequests.arrived(installId, ctx.clock.nowMs());
        fault = ctx.apiFaults.take(url.pathname.startsWith(API_BASE) ? url.pathname.slice(API_BASE.length) || "/" : url.pathname, installId);
        if (fault) ctx.apiRequests.faulted(installId);
        if (fault?.mode === "latency") {
          // A slow service: the request is processed as usual once the wait is over, unless the client gave up first.
          held = await ctx.apiFaults.hold(fault.latencyMs, c.req.raw.signal);
          if (held === "elapsed") response = await handler(c, admit(c, install, rule, checks));
        } else if (fault?.mode === "timeout") {
          // Accepted and never answered: held until the client gives up, the hold ends or the sandbox closes, then dropped.
          held = await ctx.apiFaults.hold(fault.holdMs, c.req.raw.signal);
        } else if (fault) {
          throwFaultAnswer(c, install, fault);
        } else {
          response = await handler(c, admit(c, install, rule, checks));
        }
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        errorCode = error.body.errorCode;
        response = c.json(error.body, error.httpStatus);
      }
      // Released by a reset or a shutdown: the request belongs to a world that is gone, so it is neither logged nor counted.
      if (held === "shutdown") return dropConnection(c);
      ctx.store.addEvent("api", ctx.clock.now(), {
        method: c.req.method,
        path: url.pathname + url.search,
        install_id: installId,
        status: response?.status ?? null,
        error_code: errorCode,
        ...(fault ? { fault: fault.mode } : {}),
        // README decision 57: a refused token's install and state, and a 429's RateLimit-ResetsIn, so that a
        // conformance run judges "no call with the old tokens" and "waited as ResetsIn said" from the log alone.
        ...(refused.installId !== null ? { token_install_id: refused.installId, token_state: refused.state } : {}),
        ...(response?.status === 429 ? { resets_in: numberOrNull(response.headers.get("RateLimit-ResetsIn")) } : {}),
        ...(options.identity
          ? {
              handshake,
              checks: checks.list(),
              answer: response === null ? "connection dropped: no answer" : `${response.status}${errorCode ? ` ${errorCode}` : fault ? ` (fault ${fault.mode})` : ": who the token belongs to (operatorId, scopes, installId…)"}`,
            }
          : {}),
      });
      if (installId !== null) ctx.apiRequests.answered(installId, response?.status ?? "no_answer");
      return response ?? dropConnection(c);
    };
  }

  app.get(
    "/consumers/me",
    route(null, (c, { install, consumer, operator }) =>
      c.json({
        name: consumer.name,
        operatorId: install.operatorId,
        operatorIds: [],
        teamIds: [],
        clientId: install.clientId,
        // The install's own budget (README decision 36), the same the RateLimit-* headers state.
        rateLimit: ctx.rateBudgets.budgetOf(install.installId).limit,
        rateLimitIntervalInSeconds: ctx.rateBudgets.budgetOf(install.installId).windowSeconds,
        scopes: consumer.scopes,
        createdAt: consumer.createdAt,
        updatedAt: consumer.updatedAt,
        // Not in the public API reference (public-facts.md): the sandbox adds it unless a test
        // switched it off (POST /_sandbox/consumers/install-id); apps must treat it as optional.
        ...(ctx.consumerInstallId.include ? { installId: install.installId } : {}),
        // Not in the public API reference either (README decision 49): the operator's own name, which `name` (the
        // consumer's) is not. Apps must treat it as optional and fall back to the operator id.
        operatorName: operator.operator.name,
      }),
      { identity: true },
    ),
  );

  app.get(
    "/charge-points",
    route({ resource: "charge-points", display: "charge-points:read" }, (c, { operator }) => c.json(paginate(c, operator.chargePoints))),
  );

  // public-facts: listing charges is what charge-transactions:read grants.
  app.get(
    "/charges",
    route({ resource: "charge-transactions", display: "charge-transactions:read" }, (c, { operator }) => c.json(paginate(c, operator.charges))),
  );

  app.get("/teams", route({ resource: "teams", display: "teams:read" }, (c, { operator }) => c.json(paginate(c, operator.teams))));

  // A fork's extra read-only lists (../lists/index.ts), each behind its scope like the lists above.
  for (const list of EXTRA_LISTS) {
    app.get(list.path, route({ resource: list.scopeResource, display: `${list.scopeResource}:read` }, (c, { operator }) => c.json(paginate(c, listRecords(list, operator)))));
  }

  // ----- the teams write (README decision 45; contract §2 names teams:write, not the operation) -----

  app.patch(
    "/teams/:teamId",
    route({ resource: "teams", display: "teams:write", access: "write" }, async (c, { operator }) => {
      const teamId = teamIdSchema.safeParse(c.req.param("teamId"));
      if (!teamId.success) throw apiErrors.badRequest(teamId.error.issues[0]?.message ?? "Bad team id", "teamId");
      const body = teamPatchSchema.safeParse(await readJsonBody(c));
      if (!body.success) {
        const issue = body.error.issues[0];
        throw apiErrors.badRequest(issue?.message ?? "Bad body", String(issue?.path[0] ?? "body"));
      }
      // Another operator's team answers as an unknown one: the caller learns nothing about it.
      const outcome = patchRecord(ctx, operator.operator.id, "teams", teamId.data, { name: body.data.name }, "api");
      if (!outcome.ok) throw apiErrors.recordNotFound("team", teamId.data);
      return c.json(outcome.record);
    }),
  );

  // ----- the EVSE charge history, beta (contract §4.3; README decisions 46 and 47) -----

  app.get(
    "/energy/charge-points/:chargePointId/evses/:evseId/connectors/:connectorId/charges",
    route({ resource: "energy", display: "energy:read" }, (c, { operator }) => {
      const beta = energyBetaOf(ctx, operator.operator.id);
      if (!beta.enabled) throw apiErrors.featureNotEnabled("EVSE charge history");
      const path = energyPathSchema.safeParse(c.req.param());
      if (!path.success) {
        const issue = path.error.issues[0];
        throw apiErrors.badRequest(issue?.message ?? "Bad path", String(issue?.path[0] ?? "path"));
      }
      const query = energyQuerySchema.safeParse(c.req.query());
      if (!query.success) {
        const issue = query.error.issues[0];
        throw apiErrors.badRequest(`${String(issue?.path[0] ?? "query")}: ${issue?.message ?? "bad value"}`, String(issue?.path[0] ?? "query"));
      }
      if (query.data.from && query.data.to && Date.parse(query.data.from) > Date.parse(query.data.to)) throw apiErrors.badRequest("from must not be after to", "from");
      const evse = findEvse(operator, path.data);
      if (!evse) throw apiErrors.recordNotFound("EVSE", `${path.data.chargePointId}/${path.data.evseId}/${path.data.connectorId}`);
      return c.json(energyHistoryBody(operator, evse, query.data, beta.shape));
    }),
  );

  app.all("*", (c) => {
    const error = apiErrors.notFound(new URL(c.req.url).pathname);
    return c.json(error.body, error.httpStatus);
  });

  return app;
}
