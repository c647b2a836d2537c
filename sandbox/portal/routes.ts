// The operator portal (contract §1.2): pick an operator, see the app catalogue, Connect or Uninstall.
// Connect is where the SERVICE builds the authorization request; apps never do (contract §1.3).
import { Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import type { SandboxContext } from "../context.js";
import { findOperator } from "../context.js";
import { buildPortalAuthorizationUrl } from "../idp/auth-ticket.js";
import { revokeInstall } from "../installs.js";
import { errorPage } from "../views/layout.js";
import { cataloguePage, operatorPickerPage } from "../views/portal.js";

export const OPERATOR_COOKIE = "volt_sandbox_operator";

const operatorParamSchema = z.object({ operatorId: z.coerce.number().int().positive() });
const uninstallFormSchema = z.object({ install_id: z.coerce.number().int().positive() });

export function portalRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();
  app.get("/", (c) => {
    const current = Number(getCookie(c, OPERATOR_COOKIE));
    return c.html(operatorPickerPage(ctx.seed.operators.map((o) => o.operator), findOperator(ctx, current)?.operator));
  });

  app.get("/operators/:operatorId", (c) => {
    const params = operatorParamSchema.safeParse(c.req.param());
    const data = params.success ? findOperator(ctx, params.data.operatorId) : undefined;
    if (!data) return c.html(errorPage({ title: "Unknown operator", message: "Pick an operator from the list." }), 404);
    // The sandbox's stand-in for an operator login: a cookie naming the chosen operator.
    setCookie(c, OPERATOR_COOKIE, String(data.operator.id), { path: "/", httpOnly: true, sameSite: "Lax" });
    const install = ctx.store.findActiveInstall(data.operator.id, ctx.config.client.clientId);
    const lastWebhook = [...ctx.store.state.events]
      .reverse()
      .find((e) => e.type === "webhook" && e.detail.operator_id === data.operator.id);
    return c.html(
      cataloguePage({
        operator: data.operator,
        appName: ctx.config.client.appName,
        requestedScopes: ctx.config.client.requestedScopes,
        install,
        lastWebhook: lastWebhook
          ? {
              type: String(lastWebhook.detail.event_type),
              outcome: String(lastWebhook.detail.outcome),
              detail: lastWebhook.detail.error ? String(lastWebhook.detail.error) : `HTTP ${String(lastWebhook.detail.status)} in ${String(lastWebhook.detail.latency_ms)} ms`,
            }
          : undefined,
      }),
    );
  });

  // Connect: build the authorization request (response_type=code, registered client_id and redirect_uri,
  // requested scopes + offline_access, random state) and send the browser to the identity provider.
  app.post("/operators/:operatorId/connect", (c) => {
    const params = operatorParamSchema.safeParse(c.req.param());
    const data = params.success ? findOperator(ctx, params.data.operatorId) : undefined;
    if (!data) return c.html(errorPage({ title: "Unknown operator", message: "Pick an operator from the list." }), 404);
    setCookie(c, OPERATOR_COOKIE, String(data.operator.id), { path: "/", httpOnly: true, sameSite: "Lax" });
    return c.redirect(buildPortalAuthorizationUrl(ctx, data.operator.id), 303);
  });

  // Uninstall (contract §3): revokes the install at any time; install.revoked is sent.
  app.post("/operators/:operatorId/uninstall", async (c) => {
    const params = operatorParamSchema.safeParse(c.req.param());
    const form = uninstallFormSchema.safeParse(await c.req.parseBody());
    const data = params.success ? findOperator(ctx, params.data.operatorId) : undefined;
    if (!data || !form.success) return c.html(errorPage({ title: "Bad request", message: "Unknown operator or install." }), 400);
    const install = ctx.store.findInstall(form.data.install_id);
    if (!install || install.operatorId !== data.operator.id) {
      return c.html(errorPage({ title: "Unknown install", message: "This operator has no such install." }), 404);
    }
    await revokeInstall(ctx, install.installId, "operator");
    return c.redirect(`/portal/operators/${data.operator.id}`, 303);
  });

  return app;
}
