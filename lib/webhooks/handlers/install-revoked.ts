// install.revoked (contract §6): the operator uninstalled the app. The app stops using tokens for
// that install (its grant is deleted) and never calls the API for it again.
//
// Harmless when repeated (a revoked install stays revoked), when it arrives before install.created
// (the install is recorded as revoked, and a late install.created cannot revive it: revoked is
// final), and after a re-install (it names the old install_id, so the new install is untouched).
// An install_id the app has never seen is recorded as history only, never bound to a live install
// whose install_id is unknown: the operator's live install is reconciled with the API instead.
//
// Two ways in, with one outcome (tests/integration/webhook-paths.test.ts runs the same scenarios
// through both): recordInstallRevokedAtOnce, one statement for the common states (a mass uninstall
// or a replay runs at the speed of install.created's), and handleInstallRevoked, the full
// transaction, for the states that raise or close an alert or need a check with the API.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { SYNC_INCIDENT_PREFIX } from "@/lib/alerts/incidents";
import { env } from "@/lib/env";
import { recordRevokedInstall } from "@/lib/installs/register";
import { transitionInstall } from "@/lib/installs/state";
import { InstallCreatedDataSchema, type WebhookEnvelope } from "../envelope";
import { WebhookPayloadError } from "../errors";
import { defineWebhookHandler, type DeliveryRecord, type FastPathOutcome, type HandlerResult, type Queryable } from "../handler";

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

// The common states in one statement: the database function webhook_install_revoked (migration
// 20261126010000_webhook_one_statement) does what the full transaction does for
//   - an ACTIVE install with no open sync incident: the move to REVOKED (lib/installs/state.ts:
//     ACTIVE may be revoked, and that move raises no alert, lib/alerts/incidents.ts), its grant
//     deleted, its install event, the delivery with its detail;
//   - an install already revoked: the delivery, nothing else (revoked is final, contract §3);
//   - an install_id never seen, while the operator has no live install without an install_id:
//     the revoked install recorded as history.
// It answers "full", having written nothing, for the rest: an install flagged NEEDS_REAUTH or
// REINSTALL_NEEDED (revoking it raises install.revoked), an open sync incident (revoking closes it,
// with an alert), and a live install whose install_id is unknown (a check with the API, a job). A
// state that moved while the statement waited for its row lock rolls the statement back (SQLSTATE
// STATE_MOVED in ../handler.ts) and the full transaction decides.
//
// What it costs, measured (pg_stat_statements with nested statements, auto_explain with ANALYZE and
// BUFFERS, 10,000 calls each on four connections): as much as a first install.created, about 0.5 ms
// in the database. Every lookup is by a key (an index; an empty table is scanned), there is no lock
// wait (no operator lock is taken, and the row lock is contended only by a writer of the same
// install), and no trigger runs but the foreign-key check of the install event. The costliest
// statement is the move itself: the UPDATE cannot be a HOT update, since status and
// status_changed_at are indexed (the sweep's and the console's indexes), so it writes an entry in
// each of the installs' indexes, about what the first install's INSERT writes.
// `npm run bench -- ingest` compares the two over HTTP; at concurrency 8 on a loaded machine the
// ratio spreads widely from one repetition to the next (0.54 to 1.33, median 1.04, in one run; 0.35
// to 1.18, median 0.83, in another): read the median with the range beside it, never one repetition.
export async function recordInstallRevokedAtOnce(client: Queryable, delivery: DeliveryRecord, envelope: WebhookEnvelope): Promise<FastPathOutcome> {
  const data = InstallRevokedDataSchema.safeParse(envelope.data);
  if (!data.success) return "full"; // the full path refuses it and records why
  const { install_id: installId, operator_id: operatorId, slug } = data.data;
  const { rows } = await client.query<{ outcome: FastPathOutcome }>(
    "SELECT webhook_install_revoked($1, $2, $3, $4, $5, $6, $7::jsonb, $8) AS outcome",
    [delivery.dedupeKey, installId, env().OAUTH_CLIENT_ID, operatorId, slug ?? null, delivery.deliveredAt, delivery.payloadJson, SYNC_INCIDENT_PREFIX],
  );
  return rows[0]!.outcome;
}

export const installRevoked = defineWebhookHandler({
  type: "install.revoked",
  handle: handleInstallRevoked,
  fastPath: recordInstallRevokedAtOnce,
});
