// The partner API under /api/v1 (contract §4.2). Every request: Authorization: Bearer <access token>,
// introspected server-side on each call (contract §5.4), resolved to the install's consumer, then checked
// for consumer status, re-authorization state and granted scopes, in that order.
import { Hono } from "hono";
import type { Context } from "hono";
import { z } from "zod";
import { clientExists, reauthUrl } from "../app-registration.js";
import type { SandboxContext } from "../context.js";
import { findOperator } from "../context.js";
import { findToken } from "../idp/tokens.js";
import { allowsRead } from "../scopes.js";
import type { OperatorData } from "../seed.js";
import type { ConsumerRecord, InstallRecord } from "../store.js";
import { ApiError, apiErrors } from "./errors.js";

interface Caller {
  install: InstallRecord;
  consumer: ConsumerRecord;
  operator: OperatorData;
}

/** A read needs one of these scopes. */
interface ScopeRule {
  /** Resource name whose R, R:read or R:write grants the read (sandbox decision, see README). */
  resource: string;
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

export function apiRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();

  /** Fixed window per install on the sandbox clock (contract §8: 1,000 requests per 60 seconds per install). */
  function applyRateLimit(c: Context, installId: number): void {
    const { limit, windowSeconds } = ctx.config.rateLimit;
    const now = ctx.clock.nowMs();
    let window = ctx.rateWindows.get(installId);
    if (!window || now >= window.windowStartMs + windowSeconds * 1000) {
      window = { windowStartMs: now, count: 0 };
      ctx.rateWindows.set(installId, window);
    }
    window.count += 1;
    const resetsIn = Math.max(0, Math.ceil((window.windowStartMs + windowSeconds * 1000 - now) / 1000));
    c.header("RateLimit-Policy", `${limit};w=${windowSeconds}`);
    c.header("RateLimit-Quota", String(limit));
    c.header("RateLimit-TimeWindow", String(windowSeconds));
    c.header("RateLimit-Remaining", String(Math.max(0, limit - window.count)));
    c.header("RateLimit-ResetsIn", String(resetsIn));
    if (window.count > limit) throw apiErrors.rateLimited(resetsIn);
  }

  /** `seen` records the install as soon as the token resolves, so even a 403/429 is logged against it. */
  function authenticate(c: Context, rule: ScopeRule | null, seen: { installId: number | null }): Caller {
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match?.[1]) throw apiErrors.invalidAccessToken();
    const found = findToken(ctx, match[1], "access");
    if (!found || found.token.status !== "active" || found.token.expiresAtMs <= ctx.clock.nowMs()) throw apiErrors.invalidAccessToken();
    // A client removed from the identity provider has no valid tokens while it is gone (README decision 26).
    if (!clientExists(ctx)) throw apiErrors.invalidAccessToken();
    const install = ctx.store.findInstall(found.token.installId);
    if (!install || install.status !== "active") throw apiErrors.invalidAccessToken();
    seen.installId = install.installId;
    applyRateLimit(c, install.installId);
    const consumer = ctx.store.findConsumer(install.consumerId);
    if (!consumer || consumer.status !== "active") throw apiErrors.consumerNotFound();
    if (install.needsReauth) {
      throw apiErrors.needsReauth(install.installId, ctx.config.client.appName, reauthUrl(ctx, install.installId));
    }
    // The consumer's scopes follow the install, so a re-consent widens existing tokens too (contract §3).
    if (rule && !allowsRead(consumer.scopes, rule.resource)) throw apiErrors.accessForbidden(rule.display);
    const operator = findOperator(ctx, install.operatorId);
    if (!operator) throw apiErrors.invalidAccessToken();
    return { install, consumer, operator };
  }

  /** Wraps a handler: authenticate, run, map errors, and log method/path/install/status to the event log. */
  function route(rule: ScopeRule | null, handler: (c: Context, caller: Caller) => Response) {
    return (c: Context): Response => {
      const seen: { installId: number | null } = { installId: null };
      let response: Response;
      let errorCode: string | null = null;
      try {
        response = handler(c, authenticate(c, rule, seen));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        errorCode = error.body.errorCode;
        response = c.json(error.body, error.httpStatus);
      }
      const url = new URL(c.req.url);
      ctx.store.addEvent("api", ctx.clock.now(), {
        method: c.req.method,
        path: url.pathname + url.search,
        install_id: seen.installId,
        status: response.status,
        error_code: errorCode,
      });
      return response;
    };
  }

  app.get(
    "/consumers/me",
    route(null, (c, { install, consumer }) =>
      c.json({
        name: consumer.name,
        operatorId: install.operatorId,
        operatorIds: [],
        teamIds: [],
        clientId: install.clientId,
        rateLimit: ctx.config.rateLimit.limit,
        rateLimitIntervalInSeconds: ctx.config.rateLimit.windowSeconds,
        scopes: consumer.scopes,
        createdAt: consumer.createdAt,
        updatedAt: consumer.updatedAt,
        // Not in the public API reference (public-facts.md): the sandbox adds it unless a test
        // switched it off (POST /_sandbox/consumers/install-id); apps must treat it as optional.
        ...(ctx.consumerInstallId.include ? { installId: install.installId } : {}),
      }),
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

  app.all("*", (c) => {
    const error = apiErrors.notFound(new URL(c.req.url).pathname);
    return c.json(error.body, error.httpStatus);
  });

  return app;
}
