// install.config.updated (contract §6): the operator changed the app's per-install configuration.
//
// The payload is not shown in the contract; the app stores `data.config` as given (a JSON object)
// and shows it on the dashboard. Idempotent and order-safe: a delivery older than the stored
// configuration (by its signed delivered_at) is recorded but does not overwrite it.
import "server-only";
import { z } from "zod";
import type { Tx } from "@/lib/db/client";
import type { Prisma } from "@/lib/db/generated/client";
import { InstallIdSchema, type WebhookEnvelope } from "../envelope";
import { WebhookPayloadError } from "../errors";
import { defineWebhookHandler, type HandlerResult } from "../handler";

const InstallConfigUpdatedDataSchema = z.object({
  install_id: InstallIdSchema,
  config: z.record(z.string(), z.unknown()),
});

export async function handleInstallConfigUpdated(tx: Tx, envelope: WebhookEnvelope): Promise<HandlerResult> {
  const data = InstallConfigUpdatedDataSchema.safeParse(envelope.data);
  if (!data.success) throw new WebhookPayloadError("install.config.updated data must carry install_id and a config object");
  const { install_id: installId, config } = data.data;
  const { count } = await tx.install.updateMany({
    where: {
      installId,
      status: { not: "REVOKED" },
      OR: [{ configUpdatedAt: null }, { configUpdatedAt: { lt: envelope.delivered_at } }],
    },
    data: { config: config as Prisma.InputJsonValue, configUpdatedAt: envelope.delivered_at },
  });
  return { detail: count === 1 ? `configuration of install ${installId} stored` : `install ${installId} unknown, revoked, or has a newer configuration` };
}

// No one-statement path: a configuration change comes once per change, so the full transaction is kept.
export const installConfigUpdated = defineWebhookHandler({ type: "install.config.updated", handle: handleInstallConfigUpdated });
