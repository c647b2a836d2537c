// install.created (contract §6): an operator installed the app.
//
// Idempotent by construction: recordInstall finds the install by its install_id, so a duplicate,
// a replay, or a delivery that arrives after the redirect_uri callback already stored the install
// changes nothing. It carries no credentials (contract §6): tokens only ever come from the callback.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { reconcileInstall } from "@/lib/installs/reconcile";
import { recordInstall } from "@/lib/installs/register";
import { InstallCreatedDataSchema, type WebhookEnvelope } from "../envelope";
import { WebhookPayloadError } from "../errors";
import type { HandlerResult } from "../receive";

export async function handleInstallCreated(tx: Tx, envelope: WebhookEnvelope): Promise<HandlerResult> {
  const data = InstallCreatedDataSchema.safeParse(envelope.data);
  if (!data.success) throw new WebhookPayloadError("install.created data must carry install_id and operator_id (and may carry slug)");
  const { id, created } = await recordInstall(
    tx,
    { installId: data.data.install_id, operatorId: data.data.operator_id, clientId: env().OAUTH_CLIENT_ID, slug: data.data.slug },
    "webhook",
  );
  return {
    detail: created ? `install ${data.data.install_id} recorded` : `install ${data.data.install_id} already known`,
    // If the redirect_uri came first, the install already has tokens: confirm it with the API,
    // after the response (reconcileInstall skips an install without a usable token).
    followUp: created ? undefined : () => reconcileInstall(id),
  };
}
