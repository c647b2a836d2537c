// What a webhook handler is: the types the receiver (./receive.ts) and the handlers (./handlers/)
// share. They live here, apart from both, so that a handler never imports the receiver that imports
// it (`npm run lint` refuses a circle of imports, type-only ones included: .dependency-cruiser.mjs).
//
// Each event the app acts on is one file in ./handlers/ that exports one `defineWebhookHandler(...)`,
// listed once in ./handlers/index.ts; the receiver finds handlers only through that list.
import type pg from "pg";
import type { Tx } from "@/lib/db/client";
import type { FollowUp } from "@/lib/jobs/enqueue";
import type { WebhookEnvelope } from "./envelope";

/**
 * What a handler did, and optionally the slower work that should follow (contract §6: answer within
 * 10 seconds). The follow-up is a job (lib/jobs/enqueue.ts), enqueued in the transaction that records
 * the delivery: it commits with the delivery or not at all, and a worker runs it even if this process
 * dies right after answering (a delivery is never sent again, so work kept in memory would be lost).
 */
export type HandlerResult = { detail: string; followUp?: FollowUp };
export type Handler = (tx: Tx, envelope: WebhookEnvelope) => Promise<HandlerResult>;

/** Anything a single statement can be sent on (a pooled connection). */
export type Queryable = Pick<pg.ClientBase, "query">;
/** The delivery row as the one-statement paths write it (the full path writes the same columns). */
export type DeliveryRecord = { dedupeKey: string; installId: number | null; deliveredAt: Date; payloadJson: string };
/**
 * The SQLSTATE a one-statement path raises when the install row it decided on changed before it
 * could lock it (another transaction moved it meanwhile): the statement is rolled back whole, and
 * the receiver takes the full transaction, which decides on the state as it is now. Raised by the
 * database functions of migration 20261126010000_webhook_one_statement.
 */
export const STATE_MOVED = "PAF01";
/** "full": this state needs the full transaction; the statement recorded nothing. */
export type FastPathOutcome = "processed" | "ignored" | "duplicate" | "full";
/**
 * A delivery the statement processed whose follow-up the receiver enqueues once the statement has
 * committed: the statement could not enqueue it with pg-boss's own insert (see install-created.ts),
 * so it must also have made the follow-up durable on its own before it returns this: if the process
 * dies before the job is enqueued, a sweep still does the work.
 */
export type FastPathWithFollowUp = { outcome: "processed"; followUp: FollowUp };
export type FastPathResult = FastPathOutcome | FastPathWithFollowUp;
export type FastPath = (client: Queryable, delivery: DeliveryRecord, envelope: WebhookEnvelope) => Promise<FastPathResult>;

/**
 * One webhook event the app acts on (contract §6 names the events): its `type` as the envelope
 * carries it, the full-transaction handler, and optionally a one-statement `fastPath` for the states
 * it can decide alone (the receiver falls back to `handle` when it answers "full").
 */
export type WebhookHandler = {
  type: string;
  handle: Handler;
  fastPath?: FastPath;
};

/** Declares a handler; the identity function, so that each handler file reads the same way and is type-checked. */
export function defineWebhookHandler(definition: WebhookHandler): WebhookHandler {
  return definition;
}
