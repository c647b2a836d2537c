// install.created (contract §6): an operator installed the app.
//
// Idempotent by construction: recordInstall finds the install by its install_id, so a duplicate,
// a replay, or a delivery that arrives after the redirect_uri callback already stored the install
// changes nothing. It carries no credentials (contract §6): tokens only ever come from the callback.
//
// Two ways in, with one outcome (tests/integration/webhook-paths.test.ts runs the same scenarios
// through both):
//   - recordInstallCreatedAtOnce: the common states (a first install, a re-install, a re-consent,
//     its check's job included), one SQL statement, one round trip;
//   - handleInstallCreated: the full transaction (lib/installs/register.ts) for everything else.
// Both are declared at the end of this file, and listed in ./index.ts.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { SYNC_INCIDENT_PREFIX } from "@/lib/alerts/incidents";
import { installLockKey, recordInstall } from "@/lib/installs/register";
import { followUpStatement, makeFollowUpStatement } from "@/lib/jobs/enqueue";
import { InstallCreatedDataSchema, type WebhookEnvelope } from "../envelope";
import { WebhookPayloadError } from "../errors";
import { defineWebhookHandler, type DeliveryRecord, type FastPathOutcome, type FastPathResult, type HandlerResult, type Queryable } from "../handler";

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
    // job (lib/jobs/install-check.ts). A first-seen install has no token yet: nothing to confirm.
    followUp: created ? undefined : { kind: "install-check", installRowId: id },
  };
}

// The database function writes the same details ("recorded", "already known"): keep the two in step.
const installRecordedDetail = (installId: number) => `install ${installId} recorded`;

// The common states in one statement: the database function webhook_install_created (migration
// 20261126010000_webhook_one_statement) makes recordInstall's decisions for
//   - a first install of an operator the app has never heard of: the install created ACTIVE, with
//     its first install event;
//   - a re-install: a new install_id while the operator's live install has an older one, ACTIVE and
//     with no open sync incident: that install revoked (its grant deleted, its event), the new one
//     created ACTIVE;
//   - a late announcement of an install older than the live one: recorded as revoked history;
//   - a re-consent: an install_id already stored for this operator, ACTIVE or REVOKED (at the
//     service, or the redirect_uri came first): the slug learned, and a check of the install with
//     the API requested (below);
//   - a re-consent of an install flagged NEEDS_REAUTH or REINSTALL_NEEDED (the operator reconnecting
//     from the portal), once pg-boss's insert is to hand (below): the slug learned, and the check
//     (a throttled re-authorization probe) enqueued in the statement or the delivery not recorded;
// and records the delivery with them. Every other state answers "full", having written nothing: an
// install_id stored for another operator (refused), a live install without an install_id (perhaps
// the same install), and a superseded install whose revocation raises or closes an alert.
//
// A re-consent's check (docs/spec-gaps.md A163, A205). The full transaction enqueues it as a job in
// the delivery's transaction. Here it goes in the same statement: webhook_install_created_with_check
// (migration 20261202050000_webhook_reconsent_check_in_statement) runs webhook_install_created,
// then pg-boss's own insert of the job, made in advance by pg-boss (lib/jobs/enqueue.ts,
// followUpStatement), so no SQL of the app's writes pg-boss's tables by a layout of its own. A first
// install asks for no check: one round trip is all any install.created on this path takes.
//
// Where the job cannot go in with an ACTIVE or REVOKED install's statement (the insert not made
// yet: it is made when a delivery first needs it; a job engine that refuses the job or holds its
// table for more than 250 ms), the statement has still made the request durable (an ACTIVE
// install's last_reconciled_at set to NULL: "never checked", which the reconcile sweep's due query
// takes first, lib/jobs/install-check.ts) and returns the install, and the receiver enqueues the
// very job the full transaction would once the statement has committed (../receive.ts): a second
// round trip, only then. A process that dies in between, or a job engine that refuses the job,
// delays the check to the next sweep (5 minutes at most, lib/jobs/kinds.ts) and loses nothing; a
// copy of the delivery is answered "duplicate" before any write and enqueues nothing.
//
// The function writes in the full transaction's order: the delivery under its unique key (a copy
// already recorded takes no lock), then the same advisory lock as recordInstall, so the
// redirect_uri's transaction for the same operator runs wholly before or after it. Under the lock it
// reads the operator's installs again; if they moved since its first read it raises STATE_MOVED
// (../handler.ts), the statement is rolled back whole and the full transaction decides. An install_id
// recorded meanwhile by a writer that takes no lock (install.revoked for an unseen install) fails
// the insert on its unique index (23505), with the same result.
const RECORD_INSTALL_CREATED =
  "SELECT outcome, check_install_row_id, check_enqueued FROM webhook_install_created_with_check($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12)";

/** install.created in one round trip when the state allows it; "full" sends it to handleInstallCreated. */
export async function recordInstallCreatedAtOnce(client: Queryable, delivery: DeliveryRecord, envelope: WebhookEnvelope): Promise<FastPathResult> {
  const data = InstallCreatedDataSchema.safeParse(envelope.data);
  if (!data.success) return "full"; // the full path refuses it and records why
  const { install_id: installId, operator_id: operatorId, slug } = data.data;
  const clientId = env().OAUTH_CLIENT_ID;
  const check = followUpStatement();
  const { rows } = await client
    .query<{ outcome: FastPathOutcome; check_install_row_id: string | null; check_enqueued: boolean }>(RECORD_INSTALL_CREATED, [
    installLockKey(clientId, operatorId),
    delivery.dedupeKey,
    installId,
    clientId,
    operatorId,
    slug ?? null,
    delivery.deliveredAt,
    delivery.payloadJson,
    SYNC_INCIDENT_PREFIX,
    check?.sql ?? null,
    check?.param ?? null,
    check?.placeholder ?? null,
  ])
    .catch((error: unknown) => {
      // The job's insert may be what failed (a flagged re-consent's fails the statement): made afresh.
      if (check) makeFollowUpStatement(check);
      throw error;
    });
  const { outcome, check_install_row_id: checkInstallRowId, check_enqueued: checkEnqueued } = rows[0]!;
  const checkLeft = outcome === "processed" && checkInstallRowId !== null && !checkEnqueued;
  // For the next delivery: made if there was none (a flagged re-consent answers "full" without it),
  // made afresh if it failed.
  if (outcome === "full" || checkLeft) makeFollowUpStatement(checkLeft ? check : undefined);
  if (checkLeft) return { outcome, followUp: { kind: "install-check", installRowId: checkInstallRowId } };
  return outcome;
}

export const installCreated = defineWebhookHandler({
  type: "install.created",
  handle: handleInstallCreated,
  fastPath: recordInstallCreatedAtOnce,
});
