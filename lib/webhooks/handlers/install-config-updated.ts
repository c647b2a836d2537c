// install.config.updated (contract §6): the operator changed the app's per-install configuration.
//
// The payload is not shown in the contract; the app stores `data.config` as given (a JSON object)
// and shows it on the dashboard. Idempotent and order-safe: a delivery older than the stored
// configuration (by its signed delivered_at) is recorded but does not overwrite it.
//
// Two ways in, with one outcome (tests/integration/webhook-paths.test.ts runs the same scenarios
// through both): storeInstallConfigAtOnce, one statement for every state (a replay of many
// configuration changes runs at the speed of install.created's), and handleInstallConfigUpdated,
// the full transaction, which the receiver keeps for a payload it refuses.
import "server-only";
import { z } from "zod";
import type { Tx } from "@/lib/db/client";
import type { Prisma } from "@/lib/db/generated/client";
import { InstallIdSchema, type WebhookEnvelope } from "../envelope";
import { WebhookPayloadError } from "../errors";
import { defineWebhookHandler, type DeliveryRecord, type FastPathOutcome, type HandlerResult, type Queryable } from "../handler";

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
  // The same details as the database function below writes: keep the two in step.
  return { detail: count === 1 ? `configuration of install ${installId} stored` : `install ${installId} unknown, revoked, or has a newer configuration` };
}

// Every state in one statement: the database function webhook_install_config_updated (migration
// 20261126010000_webhook_one_statement) records the delivery with the detail above and stores the
// configuration when the install is known, not revoked and holds no newer one. If the install row
// changed between the function's read and its update (a newer configuration, a revocation), the
// statement is rolled back (SQLSTATE STATE_MOVED in ../handler.ts) and the full transaction decides.
export async function storeInstallConfigAtOnce(client: Queryable, delivery: DeliveryRecord, envelope: WebhookEnvelope): Promise<FastPathOutcome> {
  const data = InstallConfigUpdatedDataSchema.safeParse(envelope.data);
  if (!data.success) return "full"; // the full path refuses it and records why
  const { rows } = await client.query<{ outcome: FastPathOutcome }>(
    "SELECT webhook_install_config_updated($1, $2, $3, $4::jsonb, $5::jsonb) AS outcome",
    // Serialized as Prisma serializes it for the full path, so both store the same JSON.
    [delivery.dedupeKey, data.data.install_id, delivery.deliveredAt, JSON.stringify(data.data.config), delivery.payloadJson],
  );
  return rows[0]!.outcome;
}

export const installConfigUpdated = defineWebhookHandler({
  type: "install.config.updated",
  handle: handleInstallConfigUpdated,
  fastPath: storeInstallConfigAtOnce,
});
