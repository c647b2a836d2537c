// GET {issuer}/oauth2/auth: the authorization endpoint. Reachable only with a request the portal built
// (see auth-ticket.ts). It validates the request as Hydra would, then opens a consent request (30 minutes)
// and sends the browser to the consent page.
import { Hono } from "hono";
import type { Context } from "hono";
import { clientExists } from "../app-registration.js";
import type { SandboxContext } from "../context.js";
import { findOperator } from "../context.js";
import { randomString, sha256Hex } from "../crypto.js";
import { Checks } from "../handshake.js";
import { CONSENT_REQUEST_TTL_MS } from "../lifetimes.js";
import { parseScopeString, registeredScopes } from "../scopes.js";
import { errorPage } from "../views/layout.js";
import { consumePortalTicket } from "./auth-ticket.js";
import { approveConsent } from "./consent.js";
import { authorizationResponseIssuer, type IdpBehaviour } from "./behaviour.js";
import { HINTS, OAuthError } from "./errors.js";

const MIN_STATE_LENGTH = 8; // fosite's minimum entropy for state

/** Sends an OAuth error back to the (already validated) redirect_uri, as RFC 6749 §4.1.2.1 says. */
function redirectWithError(c: Context, redirectUri: string, error: OAuthError, state: string | null, iss: { behaviour: IdpBehaviour; issuer: string }): Response {
  const target = new URL(redirectUri);
  target.searchParams.set("error", error.error);
  target.searchParams.set("error_description", error.description);
  if (state) target.searchParams.set("state", state);
  // RFC 9207: error responses name their issuer too.
  const issuer = authorizationResponseIssuer(iss.behaviour, iss.issuer);
  if (issuer) target.searchParams.set("iss", issuer);
  return c.redirect(target.toString(), 302);
}

export function authorizeRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();

  app.get("/oauth2/auth", async (c) => {
    const params = new URL(c.req.url).searchParams;
    const now = ctx.clock.now();
    // What this request was checked for, in order (README decision 52): the event of every outcome lists them.
    const checks = new Checks();

    // 1. Only the service builds authorization requests (contract §1.2–1.3).
    const ticket = consumePortalTicket(ctx, params);
    const handshake = ticket.handshake;
    if (!ticket.ok) {
      checks.fail(`built by the operator portal: ${ticket.reason}`);
      ctx.store.addEvent("authorize", now, { outcome: "rejected", reason: "not_built_by_portal", handshake, checks: checks.list(), answer: "400 page: apps must not build authorization URLs" });
      return c.html(
        errorPage({
          title: "Authorization request not built by the portal",
          message:
            "Apps must not build authorization URLs or offer their own connect button. The operator starts the connection from the operator portal (App catalogue → Connect); the service then builds this request and redirects here. Your app's only part in the flow is its registered redirect_uri.",
          detail: `${ticket.reason} (contract §1.2–1.3)`,
        }),
        400,
      );
    }
    checks.pass("built by the operator portal (its one-time portal_ticket: known, unused, unexpired, query unchanged)");

    // 2. Client and redirect_uri: errors here are shown, never redirected (the target is not trusted yet).
    const shown = "400 error page (not redirected: the redirect_uri is not trusted yet)";
    const clientId = params.get("client_id");
    const clientCheck = "client_id is the registered client, and the client exists";
    if (clientId !== ctx.config.client.clientId || !clientExists(ctx)) {
      checks.fail(clientCheck);
      const error = new OAuthError("invalid_client", HINTS.clientNotFound);
      ctx.store.addEvent("authorize", now, { outcome: "rejected", reason: error.error, operator_id: ticket.operatorId, handshake, checks: checks.list(), answer: shown });
      return c.html(errorPage({ title: "invalid_client", message: error.description }), 400);
    }
    checks.pass(clientCheck);
    const redirectUri = params.get("redirect_uri");
    const redirectCheck = "redirect_uri equals the registered one exactly";
    if (redirectUri !== ctx.config.client.redirectUri) {
      // Exact match against the registration (contract §2 "redirect_uri").
      checks.fail(redirectCheck);
      const error = new OAuthError("invalid_request", HINTS.redirectUriNotRegistered);
      ctx.store.addEvent("authorize", now, { outcome: "rejected", reason: "redirect_uri_mismatch", operator_id: ticket.operatorId, handshake, checks: checks.list(), answer: shown });
      return c.html(errorPage({ title: "invalid_request", message: error.description }), 400);
    }
    checks.pass(redirectCheck);

    // 3. From here on, errors go back to the app's redirect_uri with state.
    const state = params.get("state");
    const fail = (check: string, error: OAuthError, reason: string): Response => {
      checks.fail(check);
      ctx.store.addEvent("authorize", now, {
        outcome: "rejected",
        reason,
        operator_id: ticket.operatorId,
        handshake,
        checks: checks.list(),
        answer: `302 to the redirect_uri with error=${error.error}${state ? " and state" : ""}`,
      });
      return redirectWithError(c, redirectUri, error, state, { behaviour: ctx.idpBehaviour, issuer: ctx.issuer() });
    };

    const responseType = params.get("response_type") ?? "";
    const responseTypeCheck = "response_type is code";
    if (responseType !== "code") {
      return fail(responseTypeCheck, new OAuthError("unsupported_response_type", `The client is not allowed to request response_type '${responseType}'.`), "unsupported_response_type");
    }
    checks.pass(responseTypeCheck);
    const stateCheck = `state has at least ${MIN_STATE_LENGTH} characters`;
    if (!state || state.length < MIN_STATE_LENGTH) {
      return fail(stateCheck, new OAuthError("invalid_state", HINTS.stateTooShort), "invalid_state");
    }
    checks.pass(stateCheck);
    const pkceCheck = "no code_challenge (this confidential client uses no PKCE)";
    if (params.has("code_challenge") || params.has("code_challenge_method")) {
      // contract §1.7: confidential clients authenticate with client_secret_post and must not send code_challenge.
      return fail(pkceCheck, new OAuthError("invalid_request", HINTS.noPkceForConfidentialClients), "code_challenge_sent");
    }
    checks.pass(pkceCheck);
    const scopes = parseScopeString(params.get("scope") ?? "");
    const allowed = registeredScopes(ctx);
    const notAllowed = scopes.find((scope) => !allowed.includes(scope));
    if (notAllowed !== undefined) {
      return fail(
        `every scope asked for is one the app registered ('${notAllowed}' is not)`,
        new OAuthError("invalid_scope", `The OAuth 2.0 Client is not allowed to request scope '${notAllowed}'.`),
        "invalid_scope",
      );
    }
    checks.pass("every scope asked for is one the app registered");

    const operator = findOperator(ctx, ticket.operatorId);
    if (!operator) return c.html(errorPage({ title: "Unknown operator", message: "The portal session names an unknown operator." }), 400);

    // 4. Open the login/consent request (lives 30 minutes on the sandbox clock).
    const challenge = randomString(24);
    const consent = {
      operatorId: ticket.operatorId,
      clientId,
      redirectUri,
      scopes,
      state,
      createdAtMs: ctx.clock.nowMs(),
      expiresAtMs: ctx.clock.nowMs() + CONSENT_REQUEST_TTL_MS,
      handledAtMs: null,
      handshake,
    };
    ctx.store.state.consentRequests[sha256Hex(challenge)] = consent;

    // 5. The portal's Open (README decision 48): like Hydra's remembered consent (`skip`), no screen when the
    // operator's active, unflagged install already holds every scope asked for. Anything new is shown (contract §5.9).
    if (ticket.purpose === "open") {
      const install = ctx.store.findActiveInstall(ticket.operatorId, clientId);
      if (install && !install.needsReauth && scopes.every((scope) => install.scopes.includes(scope))) {
        checks.pass("Open: the operator's active install is not flagged and already holds every scope asked for, so the consent is remembered (decision 48)");
        ctx.store.addEvent("authorize", now, {
          outcome: "consent_remembered",
          operator_id: ticket.operatorId,
          handshake,
          scopes,
          checks: checks.list(),
          answer: "302 to the redirect_uri with code, scope, state and iss (no consent screen)",
        });
        // The stored record (seen through the store's change tracking), so that marking it answered is saved.
        const stored = ctx.store.state.consentRequests[sha256Hex(challenge)]!;
        return c.redirect(await approveConsent(ctx, stored, "remembered"), 302);
      }
      checks.pass("Open: something not granted before is asked for (or the install is flagged), so the consent screen is shown");
    }
    ctx.store.addEvent("authorize", now, {
      outcome: "consent_requested",
      operator_id: ticket.operatorId,
      scopes,
      handshake,
      checks: checks.list(),
      answer: "302 to the consent page (a consent request that lives 30 minutes)",
    });
    return c.redirect(`${ctx.issuer()}/consent?consent_challenge=${encodeURIComponent(challenge)}`, 302);
  });

  return app;
}
