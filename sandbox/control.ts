// The control API for tests and scripts (JSON, under /_sandbox): reset, move the clock, inspect installs,
// events and seed data, and trigger lifecycle moves the contract describes (uninstall, scope widening,
// consumer disabled). Local development only: it has no authentication.
import { Hono } from "hono";
import type { Context } from "hono";
import { z } from "zod";
import type { SandboxContext } from "./context.js";
import { findOperator } from "./context.js";
import { buildPortalAuthorizationUrl } from "./idp/auth-ticket.js";
import { revokeInstall } from "./installs.js";
import { EVENT_TYPES, emptyState } from "./store.js";
import type { InstallRecord } from "./store.js";

const advanceSchema = z.object({ seconds: z.number().finite() });
const eventsQuerySchema = z.object({
  type: z.enum(EVENT_TYPES).optional(),
  since: z.coerce.number().int().min(0).optional(),
});
const idParamSchema = z.object({ id: z.coerce.number().int().positive() });
const consumerStatusSchema = z.object({ status: z.enum(["active", "disabled"]) });
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
    consumer_id: install.consumerId,
    consumer_status: consumer?.status ?? null,
    created_at: install.createdAt,
    updated_at: install.updatedAt,
    revoked_at: install.revokedAt,
  };
}

export function controlRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();
  const bad = (c: Context, message: string) => c.json({ error: message }, 400);

  app.get("/health", (c) =>
    c.json({ ok: true, issuer: ctx.issuer(), apiBase: `${ctx.publicUrl()}/api/v1`, now: ctx.clock.now().toISOString() }),
  );

  app.post("/reset", (c) => {
    ctx.store.replaceState(emptyState());
    ctx.clock.setOffset(0);
    ctx.rateWindows.clear();
    ctx.refreshesInFlight.clear();
    ctx.store.addEvent("control", ctx.clock.now(), { action: "reset" });
    ctx.log("state reset: installs, tokens, codes and logs wiped; clock offset 0");
    return c.json({ ok: true });
  });

  app.get("/clock", (c) => c.json({ now: ctx.clock.now().toISOString(), offsetSeconds: ctx.clock.offset }));

  app.post("/clock/advance", async (c) => {
    const body = advanceSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"seconds": <number>}');
    ctx.clock.advance(body.data.seconds);
    ctx.store.state.clockOffsetSeconds = ctx.clock.offset;
    ctx.store.addEvent("control", ctx.clock.now(), { action: "clock_advanced", seconds: body.data.seconds });
    return c.json({ now: ctx.clock.now().toISOString(), offsetSeconds: ctx.clock.offset });
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
    install.needsReauth = true;
    install.updatedAt = ctx.clock.now().toISOString();
    ctx.store.addEvent("install", ctx.clock.now(), { action: "flagged_needs_reauth", install_id: install.installId, operator_id: install.operatorId });
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
    if (!query.success) return bad(c, `type must be one of: ${EVENT_TYPES.join(", ")}`);
    const { type, since } = query.data;
    const events = ctx.store.state.events.filter((e) => (!type || e.type === type) && (since === undefined || e.seq > since));
    return c.json({ events });
  });

  app.get("/deliveries", (c) => c.json({ deliveries: ctx.store.state.events.filter((e) => e.type === "webhook") }));

  app.get("/operators", (c) =>
    c.json({
      operators: ctx.seed.operators.map(({ operator, chargePoints, charges, teams }) => ({
        id: operator.id,
        name: operator.name,
        slug: operator.slug,
        chargePointCount: chargePoints.length,
        chargeCount: charges.length,
        teamCount: teams.length,
      })),
    }),
  );

  app.get("/operators/:id/charge-points", (c) => {
    const params = idParamSchema.safeParse(c.req.param());
    const data = params.success ? findOperator(ctx, params.data.id) : undefined;
    if (!data) return c.json({ error: "unknown operator" }, 404);
    return c.json({ operatorId: data.operator.id, total: data.chargePoints.length, data: data.chargePoints });
  });

  // Builds a portal-signed authorization URL, optionally with changed parameters, so conformance tests can
  // exercise the authorization endpoint's own checks (redirect_uri, scope, code_challenge...).
  app.post("/authorize-url", async (c) => {
    const body = authorizeUrlSchema.safeParse(await readJson(c));
    if (!body.success) return bad(c, 'Expected {"operatorId": <int>, "overrides"?: {"param": "value" | null}}');
    if (!findOperator(ctx, body.data.operatorId)) return c.json({ error: "unknown operator" }, 404);
    return c.json({ url: buildPortalAuthorizationUrl(ctx, body.data.operatorId, body.data.overrides) });
  });

  return app;
}
