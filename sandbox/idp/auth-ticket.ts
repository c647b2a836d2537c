// Proof that the operator portal built an authorization request (contract §1.2–1.3: the service builds it,
// apps never do). The portal stores a one-time ticket bound to the exact query it built and adds its value
// as portal_ticket; the authorization endpoint accepts the request only if the ticket exists, is unused,
// unexpired and the query is unchanged.
import type { SandboxContext } from "../context.js";
import { randomString, sha256Hex } from "../crypto.js";
import { CONSENT_REQUEST_TTL_MS } from "../lifetimes.js";
import { portalScopeString } from "../scopes.js";

export const TICKET_PARAM = "portal_ticket";

/** Sorted, re-encoded query without the ticket itself: any added, removed or changed parameter alters it. */
export function canonicalQuery(params: URLSearchParams): string {
  const entries = [...params.entries()].filter(([key]) => key !== TICKET_PARAM);
  entries.sort(([ka, va], [kb, vb]) => (ka === kb ? (va < vb ? -1 : va > vb ? 1 : 0) : ka < kb ? -1 : 1));
  return new URLSearchParams(entries).toString();
}

/**
 * Builds the authorization request exactly as the portal's Connect does: response_type=code, the registered
 * client_id and redirect_uri, the requested scopes plus offline_access, and a random state.
 * `overrides` exists for the control API only (conformance tests of the endpoint's own checks):
 * a string sets a parameter, null removes it.
 */
export function buildPortalAuthorizationUrl(
  ctx: SandboxContext,
  operatorId: number,
  overrides: Record<string, string | null> = {},
  purpose: "connect" | "open" = "connect",
): string {
  const params = new URLSearchParams({
    response_type: "code",
    client_id: ctx.config.client.clientId,
    redirect_uri: ctx.config.client.redirectUri,
    scope: portalScopeString(ctx),
    state: randomString(24),
  });
  for (const [key, value] of Object.entries(overrides)) {
    if (value === null) params.delete(key);
    else params.set(key, value);
  }
  const ticket = randomString(24);
  ctx.store.state.authTickets[sha256Hex(ticket)] = {
    operatorId,
    canonicalQuery: canonicalQuery(params),
    expiresAtMs: ctx.clock.nowMs() + CONSENT_REQUEST_TTL_MS,
    usedAtMs: null,
    // Kept in the ticket, not the query: the request an app receives is the same for both buttons.
    purpose,
  };
  ctx.store.changed();
  params.set(TICKET_PARAM, ticket);
  return `${ctx.issuer()}/oauth2/auth?${params.toString()}`;
}

export type TicketCheck = { ok: true; operatorId: number; purpose: "connect" | "open" } | { ok: false; reason: string };

/** Verifies and consumes the ticket of an incoming authorization request. */
export function consumePortalTicket(ctx: SandboxContext, params: URLSearchParams): TicketCheck {
  const value = params.get(TICKET_PARAM);
  if (!value) return { ok: false, reason: "The request carries no proof that the operator portal built it." };
  const ticket = ctx.store.state.authTickets[sha256Hex(value)];
  if (!ticket) return { ok: false, reason: "The request's portal ticket is unknown." };
  if (ticket.usedAtMs !== null) return { ok: false, reason: "This authorization request was already used once; start again from the portal." };
  if (ticket.expiresAtMs <= ctx.clock.nowMs()) return { ok: false, reason: "This authorization request expired (30 minutes); start again from the portal." };
  if (ticket.canonicalQuery !== canonicalQuery(params)) {
    return { ok: false, reason: "The request's parameters differ from the ones the portal built." };
  }
  ticket.usedAtMs = ctx.clock.nowMs();
  ctx.store.changed();
  return { ok: true, operatorId: ticket.operatorId, purpose: ticket.purpose };
}
