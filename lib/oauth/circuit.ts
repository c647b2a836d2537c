// The token-endpoint circuit breaker (contract §7, invalid_client).
//
// `invalid_client` means the identity provider does not accept the app's credentials: the client
// was removed, or its secret was re-issued. Every token request would fail the same way, so the
// first one opens the circuit and no further request is sent. Staff see it in the console, with
// the contract's action: ask the service operator to re-issue the client (this rotates the secret)
// and update OAUTH_CLIENT_SECRET. The circuit closes by itself once the configured secret differs
// from the one it opened with, or once a probe succeeds: while it is open, one refresh every
// PROBE_EVERY_MINUTES (across all instances) is let through, so an invalid_client that was the
// identity provider's passing fault, or a client the service restored with the same secret, does
// not pause every refresh until someone changes the configuration.
import "server-only";
import { createHmac } from "node:crypto";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { alertOnCircuitOpened, alertOnTokenEndpointAccepted, clientIncident } from "@/lib/alerts/incidents";

export class TokenCircuitOpenError extends Error {
  constructor() {
    super("token requests are paused: the identity provider rejected the app's client credentials (invalid_client)");
    this.name = "TokenCircuitOpenError";
  }
}

/**
 * A fingerprint of the configured secret: enough to notice a change. Keyed with the app's own
 * session secret, so a copy of the database does not let anyone test guesses of the client secret.
 */
function secretFingerprint(): string {
  const { OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET, NEXTAUTH_SECRET } = env();
  return createHmac("sha256", NEXTAUTH_SECRET).update(`${OAUTH_CLIENT_ID}\n${OAUTH_CLIENT_SECRET}`).digest("hex");
}

/**
 * How often an open circuit lets one refresh through to test the credentials. Access tokens live an
 * hour (contract §7's table): every 10 minutes gives a passing fault several chances to clear before
 * the installs' access tokens run out, and costs the identity provider one request per 10 minutes
 * for the whole deployment. A probe risks nothing: invalid_client is decided before the refresh token
 * is looked at (RFC 6749 §5.2), and a probe refused that way re-opens the circuit (openTokenCircuit),
 * which starts the next 10 minutes.
 */
export const PROBE_EVERY_MINUTES = 10;

export type TokenCircuitState = { open: false } | { open: true; reason: string | null; openedAt: Date | null };

/**
 * The circuit as it applies to the configured credentials: a circuit opened with another secret
 * no longer applies (the next token request closes it).
 */
export async function readTokenCircuit(): Promise<TokenCircuitState> {
  const health = await db().oAuthClientHealth.findUnique({ where: { clientId: env().OAUTH_CLIENT_ID } });
  if (!health?.circuitOpen || health.secretFingerprint !== secretFingerprint()) return { open: false };
  return { open: true, reason: health.reason, openedAt: health.openedAt };
}

/** Throws TokenCircuitOpenError while the circuit is open for the configured credentials. */
export async function assertTokenCircuitClosed(): Promise<void> {
  const clientId = env().OAUTH_CLIENT_ID;
  const health = await db().oAuthClientHealth.findUnique({ where: { clientId } });
  if (!health?.circuitOpen) return;
  if (health.secretFingerprint !== secretFingerprint()) {
    // The configuration changed since the circuit opened: try again.
    await db().oAuthClientHealth.update({ where: { clientId }, data: { circuitOpen: false, reason: "client configuration changed" } });
    logger.info({ clientId }, "token-endpoint circuit closed: the client configuration changed");
    return;
  }
  // One probe per PROBE_EVERY_MINUTES, whichever instance claims it first (the row's updated_at, by
  // the database's clock, so an app clock that jumps neither stops nor floods the probes).
  const claimed = await db().$executeRaw`
    UPDATE oauth_client_health SET updated_at = now()
    WHERE client_id = ${clientId} AND circuit_open AND updated_at <= now() - make_interval(mins => ${PROBE_EVERY_MINUTES})`;
  if (claimed > 0) {
    logger.info({ clientId }, "token-endpoint circuit open: letting one refresh through to test the client credentials");
    return;
  }
  throw new TokenCircuitOpenError();
}

export async function openTokenCircuit(reason: string): Promise<void> {
  const clientId = env().OAUTH_CLIENT_ID;
  const fingerprint = secretFingerprint();
  const data = { circuitOpen: true, reason, secretFingerprint: fingerprint, openedAt: new Date() };
  await db().$transaction(async (tx) => {
    const current = await tx.oAuthClientHealth.findUnique({ where: { clientId }, select: { circuitOpen: true, secretFingerprint: true } });
    // A probe refused again (assertTokenCircuitClosed): the same incident, opened when it was; the
    // write moves updated_at, which starts the next probe's wait.
    const stillOpen = current?.circuitOpen && current.secretFingerprint === fingerprint;
    await tx.oAuthClientHealth.upsert({ where: { clientId }, create: { clientId, ...data }, update: stillOpen ? { reason } : data });
    // One client.circuit_open alert per incident, committed with the circuit (lib/alerts/incidents.ts).
    await alertOnCircuitOpened(tx, clientId);
  });
  logger.error({ clientId, reason }, "token-endpoint circuit opened (invalid_client): ask the service operator to re-issue the client");
}

/**
 * A token request just succeeded: whatever opened the circuit is over. One statement in the usual
 * case (every refresh and callback comes here): close the circuit if it is open, and ask in the same
 * round trip whether the client's alert incident is open; only then is the recovery alert raised.
 */
export async function noteTokenEndpointAccepted(): Promise<void> {
  const clientId = env().OAUTH_CLIENT_ID;
  const [row] = await db().$queryRaw<{ closed: boolean; incident_open: boolean }[]>`
    WITH closed AS (
      UPDATE oauth_client_health SET circuit_open = false, reason = 'a token request succeeded', updated_at = now()
      WHERE client_id = ${clientId} AND circuit_open
      RETURNING client_id)
    SELECT EXISTS (SELECT 1 FROM closed) AS closed,
           EXISTS (SELECT 1 FROM alert_incidents WHERE key = ${clientIncident(clientId)} AND open) AS incident_open`;
  if (row?.closed) logger.info("token-endpoint circuit closed: a token request succeeded");
  // The recovery alert waits for a success, not for the configuration change that closed the circuit
  // (assertTokenCircuitClosed): a new secret that is wrong too is still the same incident.
  if (row?.incident_open) await alertOnTokenEndpointAccepted(clientId);
}
