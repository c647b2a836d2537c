// The consent page and its decision. Approve creates (or re-authorizes) the install, issues a one-minute
// single-use code, sends install.created and waits for it (bounded by the 10 s deadline), then redirects
// to the app's redirect_uri with code, scope and state. Deny redirects with error=access_denied.
import { Hono } from "hono";
import type { Context } from "hono";
import { z } from "zod";
import type { SandboxContext } from "../context.js";
import { findOperator } from "../context.js";
import { sha256Hex } from "../crypto.js";
import { Checks } from "../handshake.js";
import { AUTHORIZATION_CODE_TTL_MS } from "../lifetimes.js";
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

/** `consent` is set once the challenge names a consent request, so a refusal can still be logged on its handshake. */
type Lookup = { ok: true; consent: ConsentRequestRecord } | { ok: false; response: Response | Promise<Response>; consent: ConsentRequestRecord | null };

/** Finds the consent request and checks it is still open, recording each check (README decision 52). */
function lookupConsent(ctx: SandboxContext, c: Context, challenge: string, checks: Checks): Lookup {
  const consent = ctx.store.state.consentRequests[sha256Hex(challenge)] ?? null;
  const fail = (check: string, title: string, message: string): Lookup => {
    checks.fail(check);
    return { ok: false, consent, response: c.html(errorPage({ title, message }), 400) };
  };
  if (!consent) return fail("consent_challenge names a consent request", "Unknown consent request", "This consent request does not exist. Start again from the operator portal.");
  checks.pass("consent_challenge names a consent request");
  if (consent.handledAtMs !== null) {
    return fail("the consent request was not answered before", "Consent already given", "This consent request was already answered. Start again from the operator portal.");
  }
  checks.pass("the consent request was not answered before");
  if (consent.expiresAtMs <= ctx.clock.nowMs()) {
    return fail("the consent request has not expired (30 minutes)", "Consent request expired", "Login and consent requests live 30 minutes. Start again from the operator portal.");
  }
  checks.pass("the consent request has not expired (30 minutes)");
  return { ok: true, consent };
}

/** A refused consent request that still names its handshake goes to the event log; an unknown one names none. */
function logRefusedLookup(ctx: SandboxContext, found: Extract<Lookup, { ok: false }>, request: "shown" | "decision", checks: Checks): void {
  if (!found.consent) return;
  ctx.store.addEvent("consent", ctx.clock.now(), {
    outcome: request === "shown" ? "refused_page" : "refused_decision",
    operator_id: found.consent.operatorId,
    handshake: found.consent.handshake,
    checks: checks.list(),
    answer: "400 error page: start again from the operator portal",
  });
}

/**
 * An approved consent (by the operator on the consent page, or remembered: README decision 48): creates the install
 * and its consumer or re-authorizes the active one (contract §1.4), issues a code in a new chain (or the live one: decision 54), sends install.created
 * for a new install only, and returns the redirect_uri with code, scope, state (and iss). The request is marked answered.
 * `checks`: what the request was checked for before (the consent page's POST), for the event log.
 */
export async function approveConsent(ctx: SandboxContext, consent: ConsentRequestRecord, how: "approved" | "remembered", checks = new Checks()): Promise<string> {
  consent.handledAtMs = ctx.clock.nowMs();
  ctx.store.changed();
  const { install, created } = approveInstall(ctx, consent);
  const { code, joinedChain } = issueAuthorizationCode(ctx, {
    clientId: consent.clientId,
    redirectUri: consent.redirectUri,
    scopes: consent.scopes,
    installId: install.installId,
    handshake: consent.handshake,
  });
  const iss = authorizationResponseIssuer(ctx.idpBehaviour, ctx.issuer());
  ctx.store.addEvent("consent", ctx.clock.now(), {
    outcome: created ? "approved_new_install" : how === "remembered" ? "remembered" : "approved_reauthorized",
    operator_id: consent.operatorId,
    install_id: install.installId,
    scopes: consent.scopes,
    handshake: consent.handshake,
    checks: checks.list(),
    results: [
      how === "remembered" ? "consent remembered: no screen (decision 48)" : "the operator approved",
      created
        ? `install_id ${install.installId} created, with its consumer`
        : `install_id ${install.installId} re-authorized: same install, granted scopes as asked, NEEDS_REAUTH cleared`,
      `authorization code issued: lives ${AUTHORIZATION_CODE_TTL_MS / 1000} s, single use, ${
        joinedChain ? "joins the install's live grant (shared-grant switch, decision 54)" : "starts a new token chain"
      }`,
      created ? "install.created sent and awaited (10 s deadline) before the redirect" : "no install.created (the install already existed)",
    ],
    answer: `302 to the redirect_uri with code, scope, state${iss ? " and iss" : " (no iss: idp-behaviour)"}`,
  });
  if (created) {
    // Awaited, so the app usually has the webhook before the browser arrives; a failure is logged, never blocking.
    await ctx.webhooks.sendWebhook(
      "install.created",
      { install_id: install.installId, operator_id: install.operatorId, slug: install.slug },
      { handshake: consent.handshake },
    );
  }
  const target = new URL(consent.redirectUri);
  target.searchParams.set("code", code);
  target.searchParams.set("scope", consent.scopes.join(" "));
  target.searchParams.set("state", consent.state);
  // RFC 9207: the authorization response names its issuer (switch: idp/behaviour.ts).
  if (iss) target.searchParams.set("iss", iss);
  return target.toString();
}

export function consentRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();

  app.get("/consent", (c) => {
    const query = consentQuerySchema.safeParse(c.req.query());
    if (!query.success) return c.html(errorPage({ title: "Missing consent_challenge", message: "Open this page through the operator portal." }), 400);
    const checks = new Checks();
    const found = lookupConsent(ctx, c, query.data.consent_challenge, checks);
    if (!found.ok) {
      logRefusedLookup(ctx, found, "shown", checks);
      return found.response;
    }
    const { consent } = found;
    const operator = findOperator(ctx, consent.operatorId);
    const operatorName = operator?.operator.name ?? `operator ${consent.operatorId}`;
    const existing = ctx.store.findActiveInstall(consent.operatorId, consent.clientId);
    ctx.store.addEvent("consent", ctx.clock.now(), {
      outcome: "shown",
      operator_id: consent.operatorId,
      scopes: consent.scopes,
      handshake: consent.handshake,
      checks: checks.list(),
      results: [
        `shown to ${operatorName} (the operator the portal request names): the app's name and the exact scopes, offline_access included`,
        existing ? `an active install exists: approving re-authorizes install_id ${existing.installId}` : "no active install: approving creates one",
      ],
      answer: "200 consent page with Approve and Deny",
    });
    return c.html(
      consentPage({
        challenge: query.data.consent_challenge,
        appName: ctx.config.client.appName,
        operatorName,
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
    const checks = new Checks();
    const found = lookupConsent(ctx, c, form.data.consent_challenge, checks);
    if (!found.ok) {
      logRefusedLookup(ctx, found, "decision", checks);
      return found.response;
    }
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
      ctx.store.addEvent("consent", ctx.clock.now(), {
        outcome: "denied",
        operator_id: consent.operatorId,
        handshake: consent.handshake,
        checks: checks.list(),
        results: ["the operator denied: no install, no code"],
        answer: "302 to the redirect_uri with error=access_denied and state",
      });
      return c.redirect(target.toString(), 302);
    }

    return c.redirect(await approveConsent(ctx, consent, "approved", checks), 302);
  });

  return app;
}
