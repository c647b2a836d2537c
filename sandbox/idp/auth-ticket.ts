// Proof that the operator portal built an authorization request (contract §1.2–1.3: the service builds it,
// apps never do). The portal stores a one-time ticket bound to the exact query it built and adds its value
// as portal_ticket; the authorization endpoint accepts the request only if the ticket exists, is unused,
// unexpired and the query is unchanged.
import type { SandboxContext } from "../context.js";
import { randomString, sha256Hex } from "../crypto.js";
import { CONSENT_REQUEST_TTL_MS } from "../lifetimes.js";
import { Checks, newHandshakeId } from "../handshake.js";
import { parseScopeString, portalScopeString } from "../scopes.js";

export const TICKET_PARAM = "portal_ticket";

/** Sorted, re-encoded query without the ticket itself: any added, removed or changed parameter alters it. */
export function canonicalQuery(params: URLSearchParams): string {
  const entries = [...params.entries()].filter(([key]) => key !== TICKET_PARAM);
  entries.sort(([ka, va], [kb, vb]) => (ka === kb ? (va < vb ? -1 : va > vb ? 1 : 0) : ka < kb ? -1 : 1));
  return new URLSearchParams(entries).toString();
}

/** Who asked for the request: the portal's buttons, or a test through POST /_sandbox/authorize-url. */
export interface RequestOrigin {
  by: "portal" | "control";
  /** What the caller checked before asking (the portal: the operator, and for Open an active install). */
  checks: Checks;
}

/**
 * Builds the authorization request exactly as the portal's Connect does: response_type=code, the registered
 * client_id and redirect_uri, the requested scopes plus offline_access, and a random state.
 * `overrides` exists for the control API only (conformance tests of the endpoint's own checks):
 * a string sets a parameter, null removes it.
 * It starts a handshake (README decision 52): a `portal` event names it, and the ticket carries it on.
 */
export function buildPortalAuthorizationUrl(
  ctx: SandboxContext,
  operatorId: number,
  overrides: Record<string, string | null> = {},
  purpose: "connect" | "open" = "connect",
  origin: RequestOrigin = { by: "portal", checks: new Checks() },
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
  const handshake = newHandshakeId();
  ctx.store.state.authTickets[sha256Hex(ticket)] = {
    operatorId,
    canonicalQuery: canonicalQuery(params),
    expiresAtMs: ctx.clock.nowMs() + CONSENT_REQUEST_TTL_MS,
    usedAtMs: null,
    // Kept in the ticket, not the query: the request an app receives is the same for both buttons.
    purpose,
    handshake,
  };
  ctx.store.changed();
  params.set(TICKET_PARAM, ticket);
  const changed = Object.keys(overrides);
  ctx.store.addEvent("portal", ctx.clock.now(), {
    action: purpose,
    by: origin.by,
    operator_id: operatorId,
    handshake,
    checks: origin.checks.list(),
    results: [
      "authorization request built by the service: response_type=code, the registered client_id and redirect_uri, the requested scopes + offline_access, a random state",
      ...(purpose === "open" ? ["marked (in the ticket, not the query) to remember a consent already given (decision 48)"] : []),
      "one-time portal_ticket bound to the exact query (lives 30 minutes)",
      ...(changed.length > 0 ? [`parameters changed by the test: ${changed.join(", ")}`] : []),
    ],
    scopes: parseScopeString(params.get("scope") ?? ""),
    answer: origin.by === "portal" ? "303 to the identity provider's /oauth2/auth" : "200 with the URL (the test follows it)",
  });
  return `${ctx.issuer()}/oauth2/auth?${params.toString()}`;
}

/** `handshake`: the ticket's handshake, known once the ticket is (README decision 52). */
export type TicketCheck =
  | { ok: true; operatorId: number; purpose: "connect" | "open"; handshake: string | null }
  | { ok: false; reason: string; handshake: string | null };

/** Verifies and consumes the ticket of an incoming authorization request. */
export function consumePortalTicket(ctx: SandboxContext, params: URLSearchParams): TicketCheck {
  const value = params.get(TICKET_PARAM);
  if (!value) return { ok: false, reason: "The request carries no proof that the operator portal built it.", handshake: null };
  const ticket = ctx.store.state.authTickets[sha256Hex(value)];
  if (!ticket) return { ok: false, reason: "The request's portal ticket is unknown.", handshake: null };
  const { handshake } = ticket;
  if (ticket.usedAtMs !== null) return { ok: false, reason: "This authorization request was already used once; start again from the portal.", handshake };
  if (ticket.expiresAtMs <= ctx.clock.nowMs()) return { ok: false, reason: "This authorization request expired (30 minutes); start again from the portal.", handshake };
  if (ticket.canonicalQuery !== canonicalQuery(params)) {
    return { ok: false, reason: "The request's parameters differ from the ones the portal built.", handshake };
  }
  ticket.usedAtMs = ctx.clock.nowMs();
  ctx.store.changed();
  return { ok: true, operatorId: ticket.operatorId, purpose: ticket.purpose, handshake };
}
