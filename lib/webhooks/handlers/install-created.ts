// install.created (contract §6): an operator installed the app.
//
// Idempotent by construction: recordInstall finds the install by its install_id, so a duplicate,
// a replay, or a delivery that arrives after the redirect_uri callback already stored the install
// changes nothing. It carries no credentials (contract §6): tokens only ever come from the callback.
//
// Two ways in, with one outcome (tests/integration/webhook-paths.test.ts runs the same scenarios
// through both):
//   - recordInstallCreatedAtOnce: the common states (a first install, a re-install), one SQL
//     statement, one round trip;
//   - handleInstallCreated: the full transaction (lib/installs/register.ts) for everything else.
// Both are declared at the end of this file, and listed in ./index.ts.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { SYNC_INCIDENT_PREFIX } from "@/lib/alerts/incidents";
import { installLockKey, recordInstall } from "@/lib/installs/register";
import { InstallCreatedDataSchema, type WebhookEnvelope } from "../envelope";
import { WebhookPayloadError } from "../errors";
import { defineWebhookHandler, type DeliveryRecord, type FastPathOutcome, type HandlerResult, type Queryable } from "../handler";

export async function handleInstallCreated(tx: Tx, envelope: WebhookEnvelope): Promise<HandlerResult> {
  const data = InstallCreatedDataSchema.safeParse(envelope.data);
  if (!data.success) throw new WebhookPayloadError("install.created data must carry install_id and operator_id (and may carry slug)");
  const { id, created } = await recordInstall(
    tx,
    { installId: data.data.install_id, operatorId: data.data.operator_id, clientId: env().OAUTH_CLIENT_ID, slug: data.data.slug },
    "webhook",
  );
  return {
    detail: created ? installRecordedDetail(data.data.install_id) : `install ${data.data.install_id} already known`,
    // If the redirect_uri came first, the install already has tokens: confirm it with the API, as a
    // job (lib/jobs/install-check.ts). A first-seen install has no token yet: nothing to confirm, which
    // is why the one-statement path below, which handles only new install_ids, enqueues nothing either.
    followUp: created ? undefined : { kind: "install-check", installRowId: id },
  };
}

// The database function writes the same detail: keep the two in step.
const installRecordedDetail = (installId: number) => `install ${installId} recorded`;

// The common states in one statement: the database function webhook_install_created (migration
// 20261126010000_webhook_one_statement) makes recordInstall's decisions for
//   - a first install of an operator the app has never heard of: the install created ACTIVE, with
//     its first install event;
//   - a re-install: a new install_id while the operator's live install has an older one, ACTIVE and
//     with no open sync incident: that install revoked (its grant deleted, its event), the new one
//     created ACTIVE;
//   - a late announcement of an install older than the live one: recorded as revoked history;
// and records the delivery with them. Every other state answers "full", having written nothing: an
// install_id already stored (a re-consent, the redirect_uri first: the full transaction learns what
// is new and checks the install with the API, a job), a live install without an install_id (perhaps
// the same install), and a superseded install whose revocation raises or closes an alert.
//
// The function writes in the full transaction's order: the delivery under its unique key (a copy
// already recorded takes no lock), then the same advisory lock as recordInstall, so the
// redirect_uri's transaction for the same operator runs wholly before or after it. Under the lock it
// reads the operator's installs again; if they moved since its first read it raises STATE_MOVED
// (../handler.ts), the statement is rolled back whole and the full transaction decides. An install_id
// recorded meanwhile by a writer that takes no lock (install.revoked for an unseen install) fails
// the insert on its unique index (23505), with the same result.
const RECORD_INSTALL_CREATED = "SELECT webhook_install_created($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9) AS outcome";

/** install.created in one round trip when the state allows it; "full" sends it to handleInstallCreated. */
export async function recordInstallCreatedAtOnce(client: Queryable, delivery: DeliveryRecord, envelope: WebhookEnvelope): Promise<FastPathOutcome> {
  const data = InstallCreatedDataSchema.safeParse(envelope.data);
  if (!data.success) return "full"; // the full path refuses it and records why
  const { install_id: installId, operator_id: operatorId, slug } = data.data;
  const clientId = env().OAUTH_CLIENT_ID;
  const { rows } = await client.query<{ outcome: FastPathOutcome }>(RECORD_INSTALL_CREATED, [
    installLockKey(clientId, operatorId),
    delivery.dedupeKey,
    installId,
    clientId,
    operatorId,
    slug ?? null,
    delivery.deliveredAt,
    delivery.payloadJson,
    SYNC_INCIDENT_PREFIX,
  ]);
  return rows[0]!.outcome;
}

export const installCreated = defineWebhookHandler({
  type: "install.created",
  handle: handleInstallCreated,
  fastPath: recordInstallCreatedAtOnce,
});
