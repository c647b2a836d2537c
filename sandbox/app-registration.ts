// The app's registration as the service holds it, and the moves the app owner or the service operator make on it:
// - the requested scopes (APP_REQUESTED_SCOPES at first; the app-owner console can change them). Widening flags
//   every active install as needing re-authorization (contract §3, §5.9); narrowing changes nothing.
// - the client secret (re-issued by the service operator, which rotates it: contract §2, §5.7) and the client's
//   existence at the identity provider (a removed client answers invalid_client "does not exist": contract §7).
// Secrets are compared and stored as sha256 only; none is ever logged.
import { OFFLINE_ACCESS } from "./config.js";
import type { SandboxContext } from "./context.js";
import { constantTimeEqual, randomString, sha256Hex } from "./crypto.js";
import type { InstallRecord } from "./store.js";

/** The data scopes the app currently requests (offline_access is added by the service). */
export function requestedScopes(ctx: SandboxContext): string[] {
  return [...(ctx.store.state.app.requestedScopes ?? ctx.config.client.requestedScopes)];
}

/** Normalizes a scope list as the registration keeps it: offline_access dropped, duplicates removed, order kept. */
export function normalizeRequestedScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes.filter((scope) => scope !== OFFLINE_ACCESS))];
}

export interface ScopeChange {
  previous: string[];
  requested: string[];
  added: string[];
  removed: string[];
  /** Any scope not requested before: every active install is flagged. */
  widened: boolean;
  flaggedInstallIds: number[];
}

/** Flags one install as needing re-authorization (idempotent; keeps the first flag time). */
export function flagNeedsReauth(ctx: SandboxContext, install: InstallRecord, cause: string): void {
  const now = ctx.clock.now().toISOString();
  if (!install.needsReauth) install.needsReauthSince = now;
  install.needsReauth = true;
  install.updatedAt = now;
  ctx.store.addEvent("install", ctx.clock.now(), { action: "flagged_needs_reauth", cause, install_id: install.installId, operator_id: install.operatorId });
}

/**
 * The app owner changes the requested scopes. Widening (any scope not requested before) flags every active
 * install; narrowing or reordering only changes what the next consent shows.
 */
export function changeRequestedScopes(ctx: SandboxContext, scopes: readonly string[], by: "console" | "control"): ScopeChange {
  const previous = requestedScopes(ctx);
  const requested = normalizeRequestedScopes(scopes);
  const added = requested.filter((scope) => !previous.includes(scope));
  const removed = previous.filter((scope) => !requested.includes(scope));
  const widened = added.length > 0;
  const flaggedInstallIds: number[] = [];
  const now = ctx.clock.now();
  if (added.length > 0 || removed.length > 0 || requested.join(" ") !== previous.join(" ")) {
    ctx.store.state.app.requestedScopes = requested;
    ctx.store.state.app.scopesChangedAt = now.toISOString();
  }
  ctx.store.addEvent("control", now, { action: widened ? "scopes_widened" : removed.length > 0 ? "scopes_narrowed" : "scopes_unchanged", by, scopes: requested, added, removed });
  if (widened) {
    for (const install of ctx.store.state.installs) {
      if (install.status !== "active") continue;
      flagNeedsReauth(ctx, install, "scopes_widened");
      flaggedInstallIds.push(install.installId);
    }
  }
  ctx.log(`requested scopes set to "${requested.join(" ")}" by ${by}${widened ? `; widened, ${flaggedInstallIds.length} install(s) flagged` : ""}`);
  ctx.store.changed();
  return { previous, requested, added, removed, widened, flaggedInstallIds };
}

/** Where a flagged install's operator goes to grant consent again (context.reauth_url of NEEDS_REAUTH). */
export function reauthUrl(ctx: SandboxContext, installId: number): string {
  // POST /_sandbox/reauth-url-origin can point it elsewhere (a spoofed answer the app must not follow).
  return `${ctx.reauthUrlOrigin.value ?? ctx.publicUrl()}/portal/reauth/${installId}`;
}

// ----- client credentials -------------------------------------------------------------------------------------

export function clientExists(ctx: SandboxContext): boolean {
  return !ctx.store.state.app.clientRemoved;
}

/** Constant-time check of a presented client_secret against the current one (configured or re-issued). */
export function clientSecretMatches(ctx: SandboxContext, given: string): boolean {
  const rotated = ctx.store.state.app.clientSecretHash;
  if (rotated === null) return constantTimeEqual(given, ctx.config.client.clientSecret);
  return constantTimeEqual(sha256Hex(given), rotated);
}

/**
 * Re-issues the client (the service operator's fix for invalid_client): a new secret, the old one stops working at
 * once. A removed client is registered again. Returns the new secret, which only the caller ever sees.
 */
export function rotateClientSecret(ctx: SandboxContext, chosen?: string): string {
  const secret = chosen ?? `volt_cs_${randomString(32)}`;
  const app = ctx.store.state.app;
  app.clientSecretHash = sha256Hex(secret);
  app.clientSecretRotatedAt = ctx.clock.now().toISOString();
  const wasRemoved = app.clientRemoved;
  app.clientRemoved = false;
  ctx.store.addEvent("control", ctx.clock.now(), { action: "client_secret_rotated", client_id: ctx.config.client.clientId, re_registered: wasRemoved });
  ctx.log(`client ${ctx.config.client.clientId}: secret re-issued${wasRemoved ? " (client registered again)" : ""}; the previous secret no longer works`);
  ctx.store.changed();
  return secret;
}

export function removeClient(ctx: SandboxContext): void {
  ctx.store.state.app.clientRemoved = true;
  ctx.store.addEvent("control", ctx.clock.now(), { action: "client_removed", client_id: ctx.config.client.clientId });
  ctx.log(`client ${ctx.config.client.clientId} removed from the identity provider: the token endpoint answers invalid_client`);
  ctx.store.changed();
}

/** Test convenience: the client exists again with the configured OAUTH_CLIENT_SECRET (undoes remove and rotate). */
export function restoreClient(ctx: SandboxContext): void {
  const app = ctx.store.state.app;
  app.clientRemoved = false;
  app.clientSecretHash = null;
  app.clientSecretRotatedAt = null;
  ctx.store.addEvent("control", ctx.clock.now(), { action: "client_restored", client_id: ctx.config.client.clientId });
  ctx.log(`client ${ctx.config.client.clientId} restored with the configured secret`);
  ctx.store.changed();
}
