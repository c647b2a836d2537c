// The install lifecycle as the service runs it (contract §3): approve → active install + consumer,
// re-approve → same install re-authorized, uninstall → revoked, consumer disabled, tokens gone, install.revoked sent.
import type { SandboxContext } from "./context.js";
import { findOperator } from "./context.js";
import { randomString } from "./crypto.js";
import { dataScopes } from "./scopes.js";
import type { ConsentRequestRecord, InstallRecord } from "./store.js";

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
    createdAt: now,
    updatedAt: null,
    revokedAt: null,
  };
  store.state.installs.push(install);
  store.state.consumers.push({
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
  return { install, created: true };
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
  for (const [hash, code] of Object.entries(store.state.codes)) {
    if (code.installId === installId) delete store.state.codes[hash];
  }
  store.addEvent("install", clock.now(), { action: "revoked", by, install_id: installId, operator_id: install.operatorId, tokens_removed: tokensRemoved });
  ctx.log(`install ${installId} revoked by ${by}; ${tokensRemoved} token(s) removed`);
  await ctx.webhooks.sendWebhook("install.revoked", { install_id: installId, operator_id: install.operatorId, slug: install.slug });
  return install;
}
