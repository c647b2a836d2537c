// The operator portal (contract §1.2): pick an operator, see the app catalogue, Connect or Uninstall, edit the
// app's per-install configuration, and grant a re-authorization at reauth_url. Also the webhook delivery log page.
// Connect is where the SERVICE builds the authorization request; apps never do (contract §1.3).
import { Hono } from "hono";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { reauthUrl, requestedScopes } from "../app-registration.js";
import { reauthReturnUrl } from "../config.js";
import type { SandboxContext } from "../context.js";
import { findOperator } from "../context.js";
import { Checks } from "../handshake.js";
import { buildPortalAuthorizationUrl } from "../idp/auth-ticket.js";
import { CONFIG_CURRENCIES } from "../install-config.js";
import { configOf, grantReauthorization, revokeInstall, siteIdsOf, updateInstallConfig } from "../installs.js";
import { registeredScopes } from "../scopes.js";
import { deliveriesPage } from "../views/deliveries.js";
import { errorPage } from "../views/layout.js";
import { cataloguePage, operatorPickerPage } from "../views/portal.js";
import { reauthNotNeededPage, reauthPage } from "../views/reauth.js";

export const OPERATOR_COOKIE = "volt_sandbox_operator";

const operatorParamSchema = z.object({ operatorId: z.coerce.number().int().positive() });
const uninstallFormSchema = z.object({ install_id: z.coerce.number().int().positive() });
const catalogueQuerySchema = z.object({ saved: z.string().regex(/^whd_[A-Za-z0-9_-]{1,64}$/).optional() });
const installParamSchema = z.object({ installId: z.coerce.number().int().positive() });
const reauthFormSchema = z.object({ decision: z.enum(["approve", "deny"]) });
const deliveryParamSchema = z.object({ id: z.string().regex(/^whd_[A-Za-z0-9_-]{1,64}$/) });
const deliveriesQuerySchema = z.object({
  install_id: z.coerce.number().int().positive().optional(),
  replayed: z.string().regex(/^whd_[A-Za-z0-9_-]{1,64}$/).optional(),
});
/** Checkbox groups arrive as one string or an array of strings (parseBody({all: true})). */
const manyStrings = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]));
const configFormSchema = z.object({
  install_id: z.coerce.number().int().positive(),
  siteIds: manyStrings.pipe(z.array(z.string().regex(/^\d{1,12}$/).transform(Number))),
  syncCharges: z.literal("on").optional(),
  currency: z.enum(CONFIG_CURRENCIES),
});

const DELIVERY_ROWS_SHOWN = 200;

/** The portal's first check of a handshake (README decision 52). The sandbox's sign-in is picking the operator. */
function operatorKnown(name: string): string {
  return `operator known: ${name} (the sandbox's sign-in: picked in the portal, cookie ${OPERATOR_COOKIE})`;
}

export function portalRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();
  app.get("/", (c) => {
    const current = Number(getCookie(c, OPERATOR_COOKIE));
    // Bulk operators (thousands, made by the control API) are reachable by URL but not listed: the page stays usable.
    return c.html(operatorPickerPage(ctx.operators.listOperators({ bulk: false }), ctx.operators.describe(current)?.operator, ctx.operators.bulkCount));
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
    const query = catalogueQuerySchema.safeParse(c.req.query());
    const sites = siteIdsOf(ctx, data.operator.id).map((id) => {
      const points = data.chargePoints.filter((cp) => cp.siteId === id);
      const city = points[0]?.location.address.city ?? "";
      return { id, label: `Site ${id}${city ? ` · ${city}` : ""} (${points.length} charge point${points.length === 1 ? "" : "s"})` };
    });
    return c.html(
      cataloguePage({
        operator: data.operator,
        appName: ctx.config.client.appName,
        requestedScopes: requestedScopes(ctx),
        install,
        lastWebhook: lastWebhook
          ? {
              type: String(lastWebhook.detail.event_type),
              outcome: String(lastWebhook.detail.outcome),
              detail:
                lastWebhook.detail.outcome === "dropped"
                  ? "not sent (dropped by a delivery mode)"
                  : lastWebhook.detail.error
                    ? String(lastWebhook.detail.error)
                    : `HTTP ${String(lastWebhook.detail.status)} in ${String(lastWebhook.detail.latency_ms)} ms`,
            }
          : undefined,
        config: install ? { current: configOf(ctx, install), sites } : undefined,
        savedDeliveryId: query.success ? (query.data.saved ?? null) : null,
        reauthUrl: install ? reauthUrl(ctx, install.installId) : null,
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
    const checks = new Checks();
    checks.pass(operatorKnown(data.operator.name));
    return c.redirect(buildPortalAuthorizationUrl(ctx, data.operator.id, {}, "connect", { by: "portal", checks }), 303);
  });

  // Open (README decision 48): the way back in for an installed app. The portal builds the authorization request
  // exactly as Connect does (the app still never builds one), marked so that a consent already given is remembered:
  // the operator lands in the app signed in, on the same install, without a consent screen, unless something new
  // is asked for (a widened scope list), which the consent screen then shows.
  app.post("/operators/:operatorId/open", (c) => {
    const params = operatorParamSchema.safeParse(c.req.param());
    const data = params.success ? findOperator(ctx, params.data.operatorId) : undefined;
    if (!data) return c.html(errorPage({ title: "Unknown operator", message: "Pick an operator from the list." }), 404);
    setCookie(c, OPERATOR_COOKIE, String(data.operator.id), { path: "/", httpOnly: true, sameSite: "Lax" });
    const installed = ctx.store.findActiveInstall(data.operator.id, ctx.config.client.clientId);
    if (!installed) {
      // A catalogue page left open across an uninstall: nothing to open; installing again is Connect.
      return c.html(errorPage({ title: "Not installed", message: "This app is not installed for this operator. Connect it from the app catalogue.", who: data.operator.name }), 409);
    }
    const checks = new Checks();
    checks.pass(operatorKnown(data.operator.name));
    checks.pass(`the operator has an active install of the app (install_id ${installed.installId})`);
    return c.redirect(buildPortalAuthorizationUrl(ctx, data.operator.id, {}, "open", { by: "portal", checks }), 303);
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

  // The operator saves the app's per-install configuration: stored, then install.config.updated is sent (contract §6).
  app.post("/operators/:operatorId/config", async (c) => {
    const params = operatorParamSchema.safeParse(c.req.param());
    const form = configFormSchema.safeParse(await c.req.parseBody({ all: true }));
    const data = params.success ? findOperator(ctx, params.data.operatorId) : undefined;
    if (!data || !form.success) return c.html(errorPage({ title: "Bad request", message: "Unknown operator, or the configuration form is incomplete." }), 400);
    const install = ctx.store.findInstall(form.data.install_id);
    if (!install || install.operatorId !== data.operator.id) {
      return c.html(errorPage({ title: "Unknown install", message: "This operator has no such install." }), 404);
    }
    const result = await updateInstallConfig(
      ctx,
      install.installId,
      { siteIds: form.data.siteIds, syncCharges: form.data.syncCharges === "on", currency: form.data.currency },
      "operator",
    );
    if (!result.ok) return c.html(errorPage({ title: "Configuration not saved", message: result.message, who: data.operator.name }), result.status);
    return c.redirect(`/portal/operators/${data.operator.id}?saved=${encodeURIComponent(result.delivery.id)}`, 303);
  });

  // ----- re-authorization (reauth_url of a NEEDS_REAUTH answer) -----

  type Flagged = { ok: true; installId: number } | { ok: false; response: Response | Promise<Response> };
  function findReauthInstall(c: Context): Flagged {
    const params = installParamSchema.safeParse(c.req.param());
    const install = params.success ? ctx.store.findInstall(params.data.installId) : undefined;
    if (!install) return { ok: false, response: c.html(errorPage({ title: "Unknown install", message: "There is no install with this id." }), 404) };
    if (install.status !== "active") {
      return {
        ok: false,
        response: c.html(
          errorPage({ title: "Install revoked", message: `Install ${install.installId} was uninstalled. Connect the app again from the app catalogue to install it anew.` }),
          410,
        ),
      };
    }
    return { ok: true, installId: install.installId };
  }

  app.get("/reauth/:installId", (c) => {
    const found = findReauthInstall(c);
    if (!found.ok) return found.response;
    const install = ctx.store.findInstall(found.installId);
    const operator = install ? findOperator(ctx, install.operatorId) : undefined;
    if (!install || !operator) return c.html(errorPage({ title: "Unknown install", message: "There is no install with this id." }), 404);
    // The sandbox's operator login: reaching the page as this install's operator.
    setCookie(c, OPERATOR_COOKIE, String(operator.operator.id), { path: "/", httpOnly: true, sameSite: "Lax" });
    const returnUrl = reauthReturnUrl(ctx.config);
    if (!install.needsReauth) {
      return c.html(reauthNotNeededPage({ appName: ctx.config.client.appName, operatorName: operator.operator.name, installId: install.installId, returnUrl }));
    }
    const scopes = registeredScopes(ctx);
    return c.html(
      reauthPage({
        appName: ctx.config.client.appName,
        operatorName: operator.operator.name,
        installId: install.installId,
        scopes,
        newScopes: scopes.filter((scope) => !install.scopes.includes(scope)),
        droppedScopes: install.scopes.filter((scope) => !scopes.includes(scope)),
        returnUrl,
      }),
    );
  });

  app.post("/reauth/:installId", async (c) => {
    const found = findReauthInstall(c);
    if (!found.ok) return found.response;
    const form = reauthFormSchema.safeParse(await c.req.parseBody());
    if (!form.success) return c.html(errorPage({ title: "Bad request", message: "Expected decision=approve|deny." }), 400);
    const install = ctx.store.findInstall(found.installId);
    if (!install) return c.html(errorPage({ title: "Unknown install", message: "There is no install with this id." }), 404);
    if (form.data.decision === "deny") {
      ctx.store.addEvent("consent", ctx.clock.now(), { outcome: "denied_reauthorization", operator_id: install.operatorId, install_id: install.installId });
      return c.redirect(`/portal/operators/${install.operatorId}`, 303);
    }
    // Approving a page opened before someone else cleared the flag is harmless: the grant is the same list.
    grantReauthorization(ctx, install);
    return c.redirect(reauthReturnUrl(ctx.config), 303);
  });

  // ----- the webhook delivery log (a sandbox page; replay is the service operator's action) -----

  app.get("/deliveries", (c) => {
    const query = deliveriesQuerySchema.safeParse(c.req.query());
    const installId = query.success ? (query.data.install_id ?? null) : null;
    const all = ctx.store.state.events.filter((e) => e.type === "webhook" && (installId === null || e.detail.install_id === installId));
    const rows = all.slice(-DELIVERY_ROWS_SHOWN).reverse();
    return c.html(
      deliveriesPage({ rows, total: all.length, installId, replayed: query.success ? (query.data.replayed ?? null) : null, webhookUrl: ctx.config.webhook.url }),
    );
  });

  app.post("/deliveries/:id/replay", async (c) => {
    const params = deliveryParamSchema.safeParse(c.req.param());
    const result = params.success ? await ctx.webhooks.replay(params.data.id) : null;
    if (!result) return c.html(errorPage({ title: "Unknown delivery", message: "Only the newest 1,000 deliveries are kept for replay." }), 404);
    return c.redirect(`/portal/deliveries?replayed=${encodeURIComponent(result.id)}`, 303);
  });

  return app;
}
