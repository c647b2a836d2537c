// Receiving one webhook delivery, in the order the contract requires (contract §6):
//   1. the raw bytes, within a size limit;
//   2. the signature over those bytes, in constant time: nothing is parsed before this passes;
//   3. the envelope, validated with zod;
//   4. the signed delivered_at, within a tolerance window;
//   5. the delivery recorded under a unique key, in the same transaction as its effects, so a
//      duplicate or a replay has no second effect;
//   6. the handler for its event type (one file per event in ./handlers, listed in
//      ./handlers/index.ts), whose follow-up work, if any, is enqueued as a job in that same
//      transaction (durable: see HandlerResult in ./handler.ts); on the one-statement path, in the
//      statement too, or, where it could not be, made durable by the statement and enqueued right
//      after it commits (FastPathResult).
// Each outcome is a status code and a small JSON body with no secret in it. A delivery refused before
// it could be recorded (steps 1, 2 and 4) is counted for the console's log (./rejections.ts).
//
// Step 5 and 6 take one round trip to the database in the common case: a handler may have a
// one-statement version for the states it can decide alone (its `fastPath`), run on the ingest's own
// pool; any other state goes through the full transaction. A delivery that cannot be recorded
// before its deadline (WEBHOOK_RECORD_DEADLINE_MS after arrival) is refused with nothing recorded,
// and none is started so late that it would end after it (lib/db/ingest-pool.ts, admitBefore).
import "server-only";
import { createHash } from "node:crypto";
import { db } from "@/lib/db/client";
import { admitBefore, ConnectionDeadlineError, ingestDb, withConnectionBefore } from "@/lib/db/ingest-pool";
import { storableJson, storableString } from "@/lib/db/storable-text";
import { Prisma } from "@/lib/db/generated/client";
import { env } from "@/lib/env";
import { enqueueFollowUp, enqueueFollowUpAfterCommit, type FollowUp } from "@/lib/jobs/enqueue";
import { logger } from "@/lib/log";
import { recordWebhookRejection } from "@/lib/telemetry";
import { InstallIdSchema, WebhookEnvelopeSchema, type WebhookEnvelope } from "./envelope";
import { WebhookPayloadError } from "./errors";
import { STATE_MOVED, type DeliveryRecord, type FastPathOutcome, type Queryable } from "./handler";
import { webhookHandlerFor } from "./handlers";
import { noteRejection } from "./rejections";
import { verifyWebhookSignature } from "./signature";

export type WebhookResult = {
  status: number;
  body: { status: string; detail?: string };
};

/** The full transaction's own limit, once started (its wait for a connection ends at the deadline). */
const TRANSACTION_LIMITS = { timeout: 8_000 };

export type ReceiveOptions = {
  /** When the request arrived (epoch ms): the recording deadline counts from here. Default: now. */
  arrivedAt?: number;
  /** Skip the one-statement paths (tests prove both paths reach the same state). */
  fullPathOnly?: boolean;
};

function result(status: number, outcome: string, detail?: string): WebhookResult {
  if (status >= 400) recordWebhookRejection(outcome); // <prefix>.webhook.rejections, by reason (lib/telemetry)
  return { status, body: detail ? { status: outcome, detail } : { status: outcome } };
}

/** The dedupe key (docs/spec-gaps.md): the delivery id when the envelope has one, else the body's hash. */
function dedupeKeyFor(envelope: WebhookEnvelope | undefined, rawBody: Uint8Array): string {
  if (envelope?.id) return `id:${envelope.id}`;
  return `sha256:${createHash("sha256").update(rawBody).digest("hex")}`;
}

export async function receiveWebhook(
  rawBody: Uint8Array,
  signatureHeader: string | null,
  now = new Date(),
  options: ReceiveOptions = {},
): Promise<WebhookResult> {
  const config = env();
  const deadline = (options.arrivedAt ?? Date.now()) + config.WEBHOOK_RECORD_DEADLINE_MS;
  const secrets = [config.WEBHOOK_SECRET, config.WEBHOOK_PREVIOUS_SECRET].filter((s): s is string => !!s);
  if (!verifyWebhookSignature(rawBody, signatureHeader, secrets)) {
    logger.warn({ bytes: rawBody.byteLength, hasHeader: signatureHeader !== null }, "webhook signature rejected");
    noteRejection(signatureHeader === null ? "missing_signature" : "invalid_signature");
    return result(401, "invalid_signature");
  }

  // Authentic from here on: parse, and record even what we cannot use.
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(rawBody));
  } catch {
    await recordDelivery(rawBody, undefined, "invalid", "body is not valid JSON");
    return result(400, "invalid_json");
  }
  // Text PostgreSQL refuses (a NUL, a lone surrogate such as "\ud800") is made safe before
  // anything is stored, so an authentic delivery is recorded and acted on, never lost to a 503
  // (docs/spec-gaps.md A175).
  json = storableJson(json).value;
  // Serialized once: stored as the delivery's payload below.
  const payloadJson = JSON.stringify(json);
  const parsed = WebhookEnvelopeSchema.safeParse(json);
  if (!parsed.success) {
    await recordDelivery(rawBody, undefined, "invalid", "envelope does not match the expected layout");
    return result(400, "invalid_envelope");
  }
  const envelope = parsed.data;

  const skewSeconds = Math.abs(now.getTime() - envelope.delivered_at.getTime()) / 1000;
  if (!(skewSeconds <= config.WEBHOOK_TOLERANCE_SECONDS)) {
    // Not recorded: a stale delivery is either a replay or a clock problem, and recording it would
    // block the genuine delivery of the same id if the service replays it on request (contract §6).
    logger.warn({ type: envelope.type, skewSeconds: Math.round(skewSeconds) }, "webhook outside the delivered_at window");
    noteRejection("stale_delivery");
    return result(400, "stale_delivery");
  }

  const handler = webhookHandlerFor(envelope.type);
  const delivery: DeliveryRecord = {
    dedupeKey: dedupeKeyFor(envelope, rawBody),
    installId: InstallIdSchema.safeParse(envelope.data.install_id).data ?? null,
    deliveredAt: envelope.delivered_at,
    payloadJson,
  };

  // The common case: one statement, one round trip.
  // An event type the app does not act on is recorded as ignored, in one statement too.
  const fastPath = handler ? handler.fastPath : recordIgnoredAtOnce;
  if (fastPath && !options.fullPathOnly) {
    const answer = await withConnectionBefore(deadline, (client) => fastPath(client, delivery, envelope)).catch((error: unknown) => {
      // A row committed while the statement waited for its lock (a unique index refused the
      // insert, or the row it decided on moved), or a lock it would not wait for (a re-consent's
      // job, ./handlers/install-created.ts): the statement was rolled back whole, and the state it
      // met is the full path's to decide.
      if (isUniqueViolation(error) || isStateMoved(error) || isLockNotAvailable(error)) return "full" as const;
      throw error;
    });
    const outcome = typeof answer === "string" ? answer : answer.outcome;
    if (outcome !== "full") {
      if (typeof answer !== "string") await enqueueAfterStatement(answer.followUp, envelope.type, deadline);
      logger.info({ type: envelope.type, outcome }, "webhook received");
      return result(200, outcome);
    }
  }

  // The full transaction, on the ingest's pool too, waiting for a connection only while its
  // recording can still end by the deadline at the recent pace.
  const maxWait = admitBefore(deadline);
  try {
    const outcome = await ingestDb().$transaction(async (tx) => {
      // Recorded first, under its unique key: a concurrent or later copy inserts nothing (ON
      // CONFLICT DO NOTHING waits for this transaction) and is answered as a duplicate.
      const { dedupeKey } = delivery;
      const { count } = await tx.webhookDelivery.createMany({
        data: {
          dedupeKey,
          eventType: envelope.type,
          installId: delivery.installId,
          deliveredAt: delivery.deliveredAt,
          outcome: handler ? "processed" : "ignored",
          payload: json as Prisma.InputJsonValue,
        },
        skipDuplicates: true,
      });
      if (count === 0) return { outcome: "duplicate" };
      if (!handler) return { outcome: "ignored" };
      const handled = await handler.handle(tx, envelope);
      await tx.webhookDelivery.update({ where: { dedupeKey }, data: { detail: handled.detail } });
      if (handled.followUp) await enqueueFollowUp(tx, handled.followUp);
      return { outcome: "processed" };
    }, { ...TRANSACTION_LIMITS, maxWait });
    logger.info({ type: envelope.type, outcome: outcome.outcome }, "webhook received");
    return result(200, outcome.outcome);
  } catch (error) {
    // Prisma stopped waiting for a connection at maxWait (the deadline): nothing ran.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2028" && error.message.includes("Unable to start a transaction")) {
      throw new ConnectionDeadlineError(maxWait);
    }
    if (error instanceof WebhookPayloadError) {
      await recordDelivery(rawBody, envelope, "invalid", error.message);
      return result(400, "invalid_payload", error.message);
    }
    throw error;
  }
}

/**
 * The follow-up of a delivery one statement has recorded, enqueued after it committed. The statement
 * has already made the work durable (FastPathWithFollowUp in ./handler.ts: for a re-consent, the
 * sweep checks the install at its next run), so a job engine that refuses the job only delays the
 * work: the delivery is answered 2xx, since it is recorded and the service never sends it again
 * (contract §6). Nor does a slow one hold the answer past the delivery's deadline: the service
 * stops waiting at 10 s (contract §6) and would count a recorded delivery as failed, so the answer
 * goes at the deadline and the enqueue finishes, or fails, on its own.
 */
async function enqueueAfterStatement(followUp: FollowUp, type: string, deadline: number): Promise<void> {
  const enqueued = enqueueFollowUpAfterCommit(followUp).then(
    () => true,
    (error: unknown) => {
      logger.warn({ err: error, type, followUp: followUp.kind }, "webhook follow-up not enqueued; the next sweep does its work");
      return true;
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const deadlinePassed = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()))));
  const done = await Promise.race([enqueued, deadlinePassed]).finally(() => clearTimeout(timer));
  if (!done) logger.warn({ type, followUp: followUp.kind }, "webhook follow-up still being enqueued at the deadline; answered without waiting");
}

/**
 * The delivery id of a delivery the app could not record (503), for the log line and the staff
 * webhook log's list to ask the service to replay (contract §6): read only from an authentic body,
 * so a stranger cannot put names in that list; undefined when the body has none or is not signed.
 */
export function refusedDeliveryId(rawBody: Uint8Array, signatureHeader: string | null): string | undefined {
  const config = env();
  const secrets = [config.WEBHOOK_SECRET, config.WEBHOOK_PREVIOUS_SECRET].filter((s): s is string => !!s);
  if (!verifyWebhookSignature(rawBody, signatureHeader, secrets)) return undefined;
  try {
    const id: unknown = (JSON.parse(new TextDecoder().decode(rawBody)) as { id?: unknown } | null)?.id;
    return typeof id === "string" && id.length > 0 && id.length <= 200 ? storableString(id) : undefined;
  } catch {
    return undefined;
  }
}

/** Records a delivery that had no effect (for the audit trail); a copy of one already recorded is skipped. */
async function recordDelivery(rawBody: Uint8Array, envelope: WebhookEnvelope | undefined, outcome: string, detail: string) {
  await db().webhookDelivery.createMany({
    data: {
      dedupeKey: `${outcome}:${dedupeKeyFor(envelope, rawBody)}`,
      eventType: envelope?.type ?? null,
      deliveredAt: envelope?.delivered_at ?? null,
      outcome,
      detail,
    },
    skipDuplicates: true,
  });
}

/** An event type the app does not act on, recorded (for the audit trail) in one statement. */
async function recordIgnoredAtOnce(client: Queryable, delivery: DeliveryRecord, envelope: WebhookEnvelope): Promise<FastPathOutcome> {
  const { rowCount } = await client.query(
    `INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, payload)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, 'ignored', $5::jsonb)
     ON CONFLICT (dedupe_key) DO NOTHING`,
    [delivery.dedupeKey, envelope.type, delivery.installId, delivery.deliveredAt, delivery.payloadJson],
  );
  return rowCount === 1 ? "ignored" : "duplicate";
}

const sqlState = (error: unknown): unknown => (typeof error === "object" && error !== null && "code" in error ? error.code : undefined);
/** PostgreSQL's unique_violation (SQLSTATE 23505). */
const isUniqueViolation = (error: unknown) => sqlState(error) === "23505";
/** PostgreSQL's lock_not_available (SQLSTATE 55P03): a lock not granted within lock_timeout. */
const isLockNotAvailable = (error: unknown) => sqlState(error) === "55P03";
/** A one-statement path found its row moved under it (./handler.ts, STATE_MOVED). */
const isStateMoved = (error: unknown) => sqlState(error) === STATE_MOVED;
