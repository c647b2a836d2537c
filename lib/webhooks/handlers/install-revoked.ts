// install.revoked (contract §6): the operator uninstalled the app. The app stops using tokens for
// that install (its grant is deleted) and never calls the API for it again.
//
// Harmless when repeated (a revoked install stays revoked), when it arrives before install.created
// (the install is recorded as revoked, and a late install.created cannot revive it: revoked is
// final), and after a re-install (it names the old install_id, so the new install is untouched).
// An install_id the app has never seen is recorded as history only, never bound to a live install
// whose install_id is unknown: the operator's live install is reconciled with the API instead.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { recordRevokedInstall } from "@/lib/installs/register";
import { transitionInstall } from "@/lib/installs/state";
import { InstallCreatedDataSchema, type WebhookEnvelope } from "../envelope";
import { WebhookPayloadError } from "../errors";
import { defineWebhookHandler, type HandlerResult } from "../handler";

// The contract does not show install.revoked's payload; the sandbox sends install.created's fields.
const InstallRevokedDataSchema = InstallCreatedDataSchema.partial({ slug: true });

export async function handleInstallRevoked(tx: Tx, envelope: WebhookEnvelope): Promise<HandlerResult> {
  const data = InstallRevokedDataSchema.safeParse(envelope.data);
  if (!data.success) throw new WebhookPayloadError("install.revoked data must carry install_id and operator_id");
  const { install_id: installId, operator_id: operatorId, slug } = data.data;

  const clientId = env().OAUTH_CLIENT_ID;
  const existing = await tx.install.findUnique({ where: { installId }, select: { id: true } });
  if (!existing) {
    await recordRevokedInstall(tx, { installId, operatorId, clientId, slug });
    const live = await tx.install.findFirst({ where: { clientId, operatorId, status: "ACTIVE", installId: null }, select: { id: true } });
    return {
      detail: `install ${installId} recorded as revoked`,
      // The operator's live install may be this one (its install_id unknown): ask the API (a job).
      followUp: live ? { kind: "install-check", installRowId: live.id } : undefined,
    };
  }
  // A revocation at the service is final, so however late it arrives, it is newer than anything
  // the app believes about this install_id.
  const moved = await transitionInstall(tx, existing.id, "REVOKED", "webhook", "install.revoked");
  return { detail: moved ? `install ${installId} revoked` : `install ${installId} already revoked` };
}

// No one-statement path: a revocation comes once per install, so the full transaction is kept.
export const installRevoked = defineWebhookHandler({ type: "install.revoked", handle: handleInstallRevoked });
