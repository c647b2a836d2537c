// install.created (contract §6): an operator installed the app.
//
// Idempotent by construction: recordInstall finds the install by its install_id, so a duplicate,
// a replay, or a delivery that arrives after the redirect_uri callback already stored the install
// changes nothing. It carries no credentials (contract §6): tokens only ever come from the callback.
//
// Two ways in, with one outcome (tests/integration/webhook-paths.test.ts runs the same scenarios
// through both):
//   - recordInstallCreatedAtOnce: the common case, one SQL statement, one round trip;
//   - handleInstallCreated: the full transaction (lib/installs/register.ts) for everything else.
// Both are declared at the end of this file, and listed in ./index.ts.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { LIVE, installLockKey, recordInstall } from "@/lib/installs/register";
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
    // is why the one-statement path below, which handles only that state, enqueues nothing either.
    followUp: created ? undefined : { kind: "install-check", installRowId: id },
  };
}

const installRecordedDetail = (installId: number) => `install ${installId} recorded`;

// The common case in one statement: a first install of an operator that the app has never heard
// of. In that state recordInstall() does exactly this: record the delivery, create the install
// ACTIVE, and write its first install event. Every other state (the install_id or a live install
// of the operator already stored: a re-consent, a re-install, a revocation that came first, the
// redirect_uri that came first) needs recordInstall's decisions, so the statement then records
// nothing and says "full".
//
// Hand-written SQL because the guarantee lives in one statement's atomicity, which no Prisma call
// spans: data-modifying CTEs run as one implicit transaction, so the delivery row and its effect
// commit together or not at all.
//   - `serialized` takes the same advisory lock as recordInstall (for the statement's transaction),
//     so the redirect_uri's transaction for the same operator runs wholly before or after it; a
//     copy of a delivery already recorded takes no lock (a flood of copies does not queue on it);
//   - `fresh` checks the state. The statement's snapshot predates the lock wait, so a row committed
//     meanwhile is not seen here; the unique indexes (install_id, one live install per operator)
//     see it, and the statement fails as a whole with 23505: the caller then takes the full path;
//   - `delivery` dedupes (ON CONFLICT DO NOTHING waits for a concurrent copy's outcome), and the
//     install and its event are inserted only from the delivery row this statement inserted:
//     effects exactly once.
// Columns Prisma fills in on the client (@default(uuid()), @updatedAt) are filled in here.
const RECORD_INSTALL_CREATED = `
WITH serialized AS (
    SELECT pg_advisory_xact_lock(hashtext($1))
    WHERE NOT EXISTS (SELECT FROM webhook_deliveries WHERE dedupe_key = $6)
), fresh AS (
    SELECT FROM serialized
    WHERE NOT EXISTS (SELECT FROM installs WHERE install_id = $2)
      AND NOT EXISTS (SELECT FROM installs WHERE client_id = $3 AND operator_id = $4 AND status::text = ANY ($5::text[]))
), delivery AS (
    INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
    SELECT gen_random_uuid(), $6, 'install.created', $2, $7, 'processed', $8, $9::jsonb FROM fresh
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id
), install AS (
    INSERT INTO installs (id, install_id, client_id, operator_id, slug, granted_scopes, status, updated_at)
    SELECT gen_random_uuid(), $2, $3, $4, $10, '{}', 'ACTIVE', now() FROM delivery
    RETURNING id
), event AS (
    INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail)
    SELECT gen_random_uuid(), id, NULL, 'ACTIVE', 'webhook', 'install recorded' FROM install
)
SELECT EXISTS (SELECT FROM fresh) AS fresh,
       EXISTS (SELECT FROM delivery) AS recorded,
       EXISTS (SELECT FROM webhook_deliveries WHERE dedupe_key = $6) AS seen_before`;

/** install.created in one round trip when the state allows it; "full" sends it to handleInstallCreated. */
export async function recordInstallCreatedAtOnce(client: Queryable, delivery: DeliveryRecord, envelope: WebhookEnvelope): Promise<FastPathOutcome> {
  const data = InstallCreatedDataSchema.safeParse(envelope.data);
  if (!data.success) return "full"; // the full path refuses it and records why
  const { install_id: installId, operator_id: operatorId, slug } = data.data;
  const clientId = env().OAUTH_CLIENT_ID;
  const { rows } = await client.query<{ fresh: boolean; recorded: boolean; seen_before: boolean }>(RECORD_INSTALL_CREATED, [
    installLockKey(clientId, operatorId),
    installId,
    clientId,
    operatorId,
    [...LIVE],
    delivery.dedupeKey,
    delivery.deliveredAt,
    installRecordedDetail(installId),
    delivery.payloadJson,
    slug ?? null,
  ]);
  const { fresh, recorded, seen_before: seenBefore } = rows[0]!;
  if (recorded) return "processed";
  // Fresh but not recorded: a concurrent copy recorded it first. Not fresh: only a delivery seen
  // before is answered here; any other state is the full path's to decide.
  if (fresh || seenBefore) return "duplicate";
  return "full";
}

export const installCreated = defineWebhookHandler({
  type: "install.created",
  handle: handleInstallCreated,
  fastPath: recordInstallCreatedAtOnce,
});
