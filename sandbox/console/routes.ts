// The app-owner console (/console): "Volt sandbox · app owner console". The app owner sees the app's registration
// and its installs, and changes the requested scopes (the same move as POST /_sandbox/app/scopes).
import { Hono } from "hono";
import { z } from "zod";
import { changeRequestedScopes, clientExists, normalizeRequestedScopes, reauthUrl, requestedScopes } from "../app-registration.js";
import { OFFLINE_ACCESS, SCOPE_PATTERN } from "../config.js";
import type { SandboxContext } from "../context.js";
import { findOperator } from "../context.js";
import { energyBetaOf, setEnergyBeta } from "../energy-beta.js";
import { HANDSHAKE_ID_PATTERN } from "../handshake.js";
import { SCOPES_SUPPORTED } from "../scopes.js";
import { consolePage, type ConsoleView } from "../views/console.js";
import { handshakePage } from "../views/handshake.js";
import { errorPage } from "../views/layout.js";
import { listHandshakes } from "./handshake.js";

const scopeSchema = z.string().regex(SCOPE_PATTERN, "each scope must look like <resource> or <resource>:read|write|delete");
const scopesFormSchema = z.object({
  scopes: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]))
    .pipe(z.array(scopeSchema)),
  extra: z
    .string()
    .max(500)
    .optional()
    .transform((value) => (value ?? "").split(/\s+/).filter((scope) => scope.length > 0))
    .pipe(z.array(scopeSchema)),
});
const energyBetaFormSchema = z.object({
  operatorId: z.coerce.number().int().positive(),
  enabled: z.enum(["true", "false"]).transform((value) => value === "true"),
});
const handshakeQuerySchema = z.object({
  id: z.string().regex(HANDSHAKE_ID_PATTERN).optional(),
  install_id: z.coerce.number().int().positive().optional(),
});
/** Handshakes listed beside the one shown. */
const RECENT_HANDSHAKES = 20;
const consoleQuerySchema = z.object({
  change: z.enum(["widened", "narrowed", "unchanged"]).optional(),
  flagged: z.coerce.number().int().min(0).optional(),
});

const KNOWN_DATA_SCOPES: string[] = SCOPES_SUPPORTED.filter((scope) => scope !== OFFLINE_ACCESS);

export function consoleRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();

  function view(notice: ConsoleView["notice"], error: string | null): ConsoleView {
    return {
      appName: ctx.config.client.appName,
      clientId: ctx.config.client.clientId,
      redirectUri: ctx.config.client.redirectUri,
      webhookUrl: ctx.config.webhook.url,
      clientExists: clientExists(ctx),
      secretState: ctx.store.state.app.clientSecretRotatedAt ? `re-issued ${ctx.store.state.app.clientSecretRotatedAt}` : "as configured (OAUTH_CLIENT_SECRET)",
      requestedScopes: requestedScopes(ctx),
      knownScopes: KNOWN_DATA_SCOPES,
      installs: [...ctx.store.state.installs].reverse().map((install) => ({
        install,
        operatorName: findOperator(ctx, install.operatorId)?.operator.name ?? `operator ${install.operatorId}`,
        reauthUrl: install.needsReauth ? reauthUrl(ctx, install.installId) : null,
      })),
      energyBeta: ctx.operators.listOperators({ bulk: false }).map((operator) => ({
        operatorId: operator.id,
        operatorName: operator.name,
        enabled: energyBetaOf(ctx, operator.id).enabled,
      })),
      alerts: ctx.alertSink.list().slice(-20).reverse(),
      alertSignatureChecked: ctx.alertSink.signatureChecked,
      notice,
      error,
    };
  }

  app.get("/", (c) => {
    const query = consoleQuerySchema.safeParse(c.req.query());
    let notice: ConsoleView["notice"] = null;
    if (query.success && query.data.change) {
      const flagged = query.data.flagged ?? 0;
      notice =
        query.data.change === "widened"
          ? { kind: "notice", text: `Scopes widened: ${flagged} install${flagged === 1 ? "" : "s"} flagged as needing re-authorization.` }
          : query.data.change === "narrowed"
            ? { kind: "success", text: "Scopes narrowed: existing installs are not affected." }
            : { kind: "success", text: "Scopes saved: nothing was added or removed." };
    }
    return c.html(consolePage(view(notice, null)));
  });

  // Each request of an install handshake with what was checked (README decision 52): the latest, one install's
  // latest (?install_id=N), or one by id (?id=hs_…).
  app.get("/handshake", (c) => {
    const query = handshakeQuerySchema.safeParse(c.req.query());
    if (!query.success) return c.html(errorPage({ title: "Bad request", message: "Expected ?id=hs_… or ?install_id=<positive integer>." }), 400);
    const { id, install_id: installId } = query.data;
    const all = listHandshakes(ctx.store.state.events);
    const recent = installId === undefined ? all : all.filter((h) => h.installId === installId);
    const selected = id !== undefined ? all.find((h) => h.id === id) : recent[0];
    const missing =
      id !== undefined && !selected
        ? `Handshake ${id} is not in the event log (it keeps the newest 5,000 events).`
        : installId !== undefined && !selected
          ? `No handshake of install_id ${installId} in the event log (it keeps the newest 5,000 events; bulk installs have none).`
          : null;
    const view = handshakePage({
      selected: selected ?? null,
      recent: recent.slice(0, RECENT_HANDSHAKES),
      installId: installId ?? null,
      missing,
      operatorName: (operatorId) => (operatorId === null ? "unknown operator" : (findOperator(ctx, operatorId)?.operator.name ?? `operator ${operatorId}`)),
      redirectUri: ctx.config.client.redirectUri,
    });
    return c.html(view, missing ? 404 : 200);
  });

  app.post("/scopes", async (c) => {
    const form = scopesFormSchema.safeParse(await c.req.parseBody({ all: true }));
    if (!form.success) {
      const message = form.error.issues[0]?.message ?? "Invalid scopes";
      return c.html(consolePage(view(null, `Scopes not saved: ${message}.`)), 400);
    }
    const scopes = normalizeRequestedScopes([...form.data.scopes, ...form.data.extra]);
    if (scopes.length === 0) return c.html(consolePage(view(null, "Scopes not saved: request at least one scope besides offline_access.")), 400);
    const change = changeRequestedScopes(ctx, scopes, "console");
    const kind = change.widened ? "widened" : change.removed.length > 0 ? "narrowed" : "unchanged";
    return c.redirect(`/console?change=${kind}&flagged=${change.flaggedInstallIds.length}`, 303);
  });

  // The service operator's per-account switch for the EVSE charge-history beta (same move as PUT /_sandbox/operators/:id/energy-beta).
  app.post("/energy-beta", async (c) => {
    const form = energyBetaFormSchema.safeParse(await c.req.parseBody());
    if (!form.success || !ctx.operators.describe(form.data.operatorId)) return c.html(consolePage(view(null, "Beta switch not changed: unknown operator.")), 400);
    setEnergyBeta(ctx, form.data.operatorId, { enabled: form.data.enabled }, "console");
    return c.redirect("/console", 303);
  });

  return app;
}
