// The consent page and its decision. Approve creates (or re-authorizes) the install, issues a one-minute
// single-use code, sends install.created and waits for it (bounded by the 10 s deadline), then redirects
// to the app's redirect_uri with code, scope and state. Deny redirects with error=access_denied.
import { Hono } from "hono";
import type { Context } from "hono";
import { z } from "zod";
import type { SandboxContext } from "../context.js";
import { findOperator } from "../context.js";
import { sha256Hex } from "../crypto.js";
import type { ConsentRequestRecord } from "../store.js";
import { approveInstall } from "../installs.js";
import { consentPage } from "../views/consent.js";
import { errorPage } from "../views/layout.js";
import { authorizationResponseIssuer } from "./behaviour.js";
import { HINTS, OAuthError } from "./errors.js";
import { issueAuthorizationCode } from "./tokens.js";

const consentQuerySchema = z.object({ consent_challenge: z.string().min(1) });
const consentDecisionSchema = z.object({
  consent_challenge: z.string().min(1),
  decision: z.enum(["approve", "deny"]),
});

type Lookup = { ok: true; consent: ConsentRequestRecord } | { ok: false; response: Response | Promise<Response> };

function lookupConsent(ctx: SandboxContext, c: Context, challenge: string): Lookup {
  const consent = ctx.store.state.consentRequests[sha256Hex(challenge)];
  const fail = (title: string, message: string): Lookup => ({ ok: false, response: c.html(errorPage({ title, message }), 400) });
  if (!consent) return fail("Unknown consent request", "This consent request does not exist. Start again from the operator portal.");
  if (consent.handledAtMs !== null) return fail("Consent already given", "This consent request was already answered. Start again from the operator portal.");
  if (consent.expiresAtMs <= ctx.clock.nowMs()) {
    return fail("Consent request expired", "Login and consent requests live 30 minutes. Start again from the operator portal.");
  }
  return { ok: true, consent };
}

/**
 * An approved consent (by the operator on the consent page, or remembered: README decision 48): creates the install
 * and its consumer or re-authorizes the active one (contract §1.4), issues a code in a new chain, sends install.created
 * for a new install only, and returns the redirect_uri with code, scope, state (and iss). The request is marked answered.
 */
export async function approveConsent(ctx: SandboxContext, consent: ConsentRequestRecord, how: "approved" | "remembered"): Promise<string> {
  consent.handledAtMs = ctx.clock.nowMs();
  ctx.store.changed();
  const { install, created } = approveInstall(ctx, consent);
  const code = issueAuthorizationCode(ctx, {
    clientId: consent.clientId,
    redirectUri: consent.redirectUri,
    scopes: consent.scopes,
    installId: install.installId,
  });
  ctx.store.addEvent("consent", ctx.clock.now(), {
    outcome: created ? "approved_new_install" : how === "remembered" ? "remembered" : "approved_reauthorized",
    operator_id: consent.operatorId,
    install_id: install.installId,
    scopes: consent.scopes,
  });
  if (created) {
    // Awaited, so the app usually has the webhook before the browser arrives; a failure is logged, never blocking.
    await ctx.webhooks.sendWebhook("install.created", { install_id: install.installId, operator_id: install.operatorId, slug: install.slug });
  }
  const target = new URL(consent.redirectUri);
  target.searchParams.set("code", code);
  target.searchParams.set("scope", consent.scopes.join(" "));
  target.searchParams.set("state", consent.state);
  // RFC 9207: the authorization response names its issuer (switch: idp/behaviour.ts).
  const iss = authorizationResponseIssuer(ctx.idpBehaviour, ctx.issuer());
  if (iss) target.searchParams.set("iss", iss);
  return target.toString();
}

export function consentRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();

  app.get("/consent", (c) => {
    const query = consentQuerySchema.safeParse(c.req.query());
    if (!query.success) return c.html(errorPage({ title: "Missing consent_challenge", message: "Open this page through the operator portal." }), 400);
    const found = lookupConsent(ctx, c, query.data.consent_challenge);
    if (!found.ok) return found.response;
    const { consent } = found;
    const operator = findOperator(ctx, consent.operatorId);
    const existing = ctx.store.findActiveInstall(consent.operatorId, consent.clientId);
    return c.html(
      consentPage({
        challenge: query.data.consent_challenge,
        appName: ctx.config.client.appName,
        operatorName: operator?.operator.name ?? `operator ${consent.operatorId}`,
        scopes: consent.scopes,
        redirectUri: consent.redirectUri,
        reauthorizeInstallId: existing?.installId ?? null,
      }),
    );
  });

  app.post("/consent", async (c) => {
    const form = consentDecisionSchema.safeParse(await c.req.parseBody());
    if (!form.success) {
      return c.html(errorPage({ title: "Bad consent form", message: "Expected consent_challenge and decision=approve|deny." }), 400);
    }
    const found = lookupConsent(ctx, c, form.data.consent_challenge);
    if (!found.ok) return found.response;
    const { consent } = found;
    consent.handledAtMs = ctx.clock.nowMs();
    ctx.store.changed();

    const target = new URL(consent.redirectUri);
    // RFC 9207: the authorization response names its issuer (switch: idp/behaviour.ts).
    const iss = authorizationResponseIssuer(ctx.idpBehaviour, ctx.issuer());
    if (form.data.decision === "deny") {
      const error = new OAuthError("access_denied", HINTS.operatorDenied);
      target.searchParams.set("error", error.error);
      target.searchParams.set("error_description", error.description);
      target.searchParams.set("state", consent.state);
      if (iss) target.searchParams.set("iss", iss);
      ctx.store.addEvent("consent", ctx.clock.now(), { outcome: "denied", operator_id: consent.operatorId });
      return c.redirect(target.toString(), 302);
    }

    return c.redirect(await approveConsent(ctx, consent, "approved"), 302);
  });

  return app;
}
