// The install lifecycle as the service runs it (contract §3): approve → active install + consumer,
// re-approve → same install re-authorized, uninstall → revoked, consumer disabled, tokens gone, install.revoked sent.
import type { SandboxContext } from "./context.js";
import { findOperator } from "./context.js";
import { randomString } from "./crypto.js";
import { markChainsOfInstallRevoked } from "./idp/tokens.js";
import { defaultInstallConfig, type InstallConfig, type InstallConfigPatch } from "./install-config.js";
import { dataScopes, registeredScopes } from "./scopes.js";
import type { ConsentRequestRecord, InstallRecord } from "./store.js";
import type { DeliveryResult } from "./webhooks.js";

export interface ApprovedInstall {
  install: InstallRecord;
  /** false when the operator re-authorized an install that was already active. */
  created: boolean;
}

/**
 * Creates the install and its consumer, or re-authorizes the operator's active install of this app:
 * only one active install per app and operator (contract §2), so Connect on an installed app keeps its install_id.
 */
export function approveInstall(ctx: SandboxContext, consent: ConsentRequestRecord): ApprovedInstall {
  const { store, clock } = ctx;
  const now = clock.now().toISOString();
  const operator = findOperator(ctx, consent.operatorId);
  if (!operator) throw new Error(`unknown operator ${consent.operatorId}`);

  const existing = store.findActiveInstall(consent.operatorId, consent.clientId);
  if (existing) {
    existing.scopes = [...consent.scopes];
    existing.needsReauth = false;
    existing.needsReauthSince = null;
    existing.updatedAt = now;
    const consumer = store.findConsumer(existing.consumerId);
    if (consumer) {
      consumer.scopes = dataScopes(consent.scopes);
      consumer.updatedAt = now;
    }
    store.addEvent("install", clock.now(), { action: "reauthorized", install_id: existing.installId, operator_id: existing.operatorId });
    return { install: existing, created: false };
  }

  // install_id is an integer that only grows and is never reused, even across revocations.
  const installId = store.state.nextInstallId;
  store.state.nextInstallId += 1;
  const consumerId = `cons_${randomString(9)}`;
  const install: InstallRecord = {
    installId,
    operatorId: consent.operatorId,
    clientId: consent.clientId,
    slug: operator.operator.slug,
    status: "active",
    scopes: [...consent.scopes],
    consumerId,
    needsReauth: false,
    needsReauthSince: null,
    config: defaultInstallConfig(operator.charges[0]?.currency.identifier ?? "EUR"),
    createdAt: now,
    updatedAt: null,
    revokedAt: null,
  };
  store.addInstall(install, {
    id: consumerId,
    installId,
    operatorId: consent.operatorId,
    name: `${ctx.config.client.appName} · ${operator.operator.name}`,
    status: "active",
    scopes: dataScopes(consent.scopes),
    createdAt: now,
    updatedAt: null,
  });
  store.addEvent("install", clock.now(), { action: "created", install_id: installId, operator_id: consent.operatorId });
  // The stored record (seen through the store's change tracking), not the literal above: callers may change it.
  return { install: store.findInstall(installId)!, created: true };
}

/**
 * Uninstall (contract §3): the install is revoked, its consumer disabled, its tokens and codes deleted
 * (so refresh fails and API calls get 401), and install.revoked is sent. client_id/secret stay valid.
 * Returns null when there is no such active install (idempotent).
 */
export async function revokeInstall(ctx: SandboxContext, installId: number, by: "operator" | "control"): Promise<InstallRecord | null> {
  const { store, clock } = ctx;
  const install = store.findInstall(installId);
  if (!install || install.status !== "active") return null;
  const now = clock.now().toISOString();
  install.status = "revoked";
  install.revokedAt = now;
  install.updatedAt = now;
  const consumer = store.findConsumer(install.consumerId);
  if (consumer) {
    consumer.status = "disabled";
    consumer.updatedAt = now;
  }
  const tokensRemoved = store.deleteTokensOfInstall(installId);
  markChainsOfInstallRevoked(ctx, installId);
  for (const [hash, code] of Object.entries(store.state.codes)) {
    if (code.installId === installId) delete store.state.codes[hash];
  }
  store.addEvent("install", clock.now(), { action: "revoked", by, install_id: installId, operator_id: install.operatorId, tokens_removed: tokensRemoved });
  ctx.log(`install ${installId} revoked by ${by}; ${tokensRemoved} token(s) removed`);
  await ctx.webhooks.sendWebhook("install.revoked", { install_id: installId, operator_id: install.operatorId, slug: install.slug });
  return install;
}

/**
 * The operator grants consent again at reauth_url (contract §3 "Install flagged → operator grants consent again"):
 * the flag is cleared and the install's granted scopes become the app's current list; existing tokens keep working
 * and now carry the widened scopes (the API reads the consumer's scopes on every call).
 */
export function grantReauthorization(ctx: SandboxContext, install: InstallRecord): string[] {
  const now = ctx.clock.now().toISOString();
  const scopes = registeredScopes(ctx);
  install.scopes = [...scopes];
  install.needsReauth = false;
  install.needsReauthSince = null;
  install.updatedAt = now;
  const consumer = ctx.store.findConsumer(install.consumerId);
  if (consumer) {
    consumer.scopes = dataScopes(scopes);
    consumer.updatedAt = now;
  }
  ctx.store.addEvent("install", ctx.clock.now(), { action: "reauthorized", via: "reauth_url", install_id: install.installId, operator_id: install.operatorId, scopes });
  ctx.store.addEvent("consent", ctx.clock.now(), { outcome: "approved_reauthorization", operator_id: install.operatorId, install_id: install.installId, scopes });
  ctx.log(`install ${install.installId} re-authorized by its operator; granted scopes now "${scopes.join(" ")}"`);
  return scopes;
}

/** The install's configuration, or the default for installs stored before configurations existed. */
export function configOf(ctx: SandboxContext, install: InstallRecord): InstallConfig {
  if (install.config) return install.config;
  const operator = findOperator(ctx, install.operatorId);
  return defaultInstallConfig(operator?.charges[0]?.currency.identifier ?? "EUR");
}

/** Site ids of an operator (from its charge points), ascending. */
export function siteIdsOf(ctx: SandboxContext, operatorId: number): number[] {
  const operator = findOperator(ctx, operatorId);
  const ids = new Set<number>();
  for (const cp of operator?.chargePoints ?? []) if (cp.siteId !== null) ids.add(cp.siteId);
  return [...ids].sort((a, b) => a - b);
}

export type ConfigUpdate =
  | { ok: true; install: InstallRecord; config: InstallConfig; delivery: DeliveryResult }
  | { ok: false; status: 404 | 400; message: string };

/**
 * The operator saves the app's per-install configuration: it is stored and install.config.updated is sent with
 * data {install_id, operator_id, config} (every save sends one, changed or not). `patch` settings replace the current ones.
 */
export async function updateInstallConfig(ctx: SandboxContext, installId: number, patch: InstallConfigPatch, by: "operator" | "control"): Promise<ConfigUpdate> {
  const install = ctx.store.findInstall(installId);
  if (!install || install.status !== "active") return { ok: false, status: 404, message: "no active install with this id" };
  const next: InstallConfig = { ...configOf(ctx, install), ...patch };
  const known = siteIdsOf(ctx, install.operatorId);
  const unknown = next.siteIds.filter((id) => !known.includes(id));
  if (unknown.length > 0) return { ok: false, status: 400, message: `unknown site id(s) for operator ${install.operatorId}: ${unknown.join(", ")}` };
  install.config = { ...next, siteIds: [...next.siteIds] };
  install.updatedAt = ctx.clock.now().toISOString();
  ctx.store.addEvent("install", ctx.clock.now(), {
    action: "config_updated",
    by,
    install_id: install.installId,
    operator_id: install.operatorId,
    site_ids: next.siteIds.map(String),
    sync_charges: next.syncCharges,
    currency: next.currency,
  });
  const delivery = await ctx.webhooks.sendWebhook("install.config.updated", { install_id: install.installId, operator_id: install.operatorId, config: install.config });
  return { ok: true, install, config: install.config, delivery };
}
