// Deliveries the webhook route refused before recording anything, for the console's webhook log
// (/admin/webhooks): how many, when, and why.
//
// Anyone on the internet can send these, as fast as they like, so they are counted, not kept one by
// one: per minute and reason, in memory, and written every FLUSH_INTERVAL_MS in one statement. What a
// flood costs us is then bounded by the number of reasons and minutes, never by the sender: no row
// per request, no write on the request's path (its answer never waits on, or fails with, the
// database), and nothing the sender wrote is stored (not the body, not a header). Rows older than
// RETENTION_DAYS are deleted by the flush itself.
//
// The price: counts still in memory when a process dies (at most FLUSH_INTERVAL_MS of them) are lost.
// For a tally of refused deliveries that is the right trade; every delivery the app accepts is
// recorded durably before it is answered (lib/webhooks/receive.ts).
import "server-only";
import { db } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import { logger } from "@/lib/log";

/** Why a delivery was refused before it was recorded, as the console's log names it. */
export const REJECTION_REASONS = {
  missing_signature: "No signature header (answered 401)",
  invalid_signature: "The signature does not match the webhook secret (answered 401)",
  stale_delivery: "Signed, but its delivered_at is outside the tolerance window: a replay or a clock problem (answered 400)",
  body_too_large: "The body is over WEBHOOK_MAX_BODY_BYTES (answered 413)",
  body_timeout: "The body did not arrive within WEBHOOK_READ_TIMEOUT_MS (answered 408)",
  unreadable_body: "The body could not be read (answered 400)",
  not_recorded: "Not recorded before its deadline, e.g. the database was away or overloaded (answered 503): ask the service to replay the delivery ids listed",
} as const;
export type RejectionReason = keyof typeof REJECTION_REASONS;

const FLUSH_INTERVAL_MS = 2_000;
const RETENTION_DAYS = 30;
const RETENTION_EVERY_MS = 60 * 60 * 1000;

type Tally = { minute: Date; reason: RejectionReason; count: number; firstAt: Date; lastAt: Date; deliveryIds: string[] };

/**
 * The delivery ids kept per minute and reason (not_recorded): only signed deliveries have one here,
 * so the service's own volume bounds them; the cap bounds the row whatever it sends.
 */
export const MAX_DELIVERY_IDS = 200;

const pending = new Map<string, Tally>();
let timer: NodeJS.Timeout | undefined;
let lastRetention = 0;

/**
 * Counts one refused delivery, with its delivery id when it is an authentic one refused for our own
 * failure (503), so staff can ask for a replay of it. Never throws, never waits: the route answers at once.
 */
export function noteRejection(reason: RejectionReason, at = new Date(), deliveryId?: string): void {
  const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000);
  const key = `${minute.getTime()}:${reason}`;
  const tally = pending.get(key);
  if (tally) {
    tally.count += 1;
    tally.lastAt = at;
    if (deliveryId && tally.deliveryIds.length < MAX_DELIVERY_IDS) tally.deliveryIds.push(deliveryId);
  } else {
    pending.set(key, { minute, reason, count: 1, firstAt: at, lastAt: at, deliveryIds: deliveryId ? [deliveryId] : [] });
  }
  // The timer keeps no process alive (unref): a process that exits loses at most one interval.
  timer ??= setTimeout(() => {
    timer = undefined;
    void flushRejections();
  }, FLUSH_INTERVAL_MS).unref();
}

/** Writes the counts gathered so far in one statement; on failure they wait for the next flush. */
export async function flushRejections(): Promise<void> {
  if (pending.size === 0) return;
  const tallies = [...pending.values()];
  pending.clear();
  try {
    await db().$executeRaw`
      INSERT INTO webhook_rejections (minute, reason, count, first_at, last_at, delivery_ids)
      SELECT t.minute, t.reason, t.count, t.first_at, t.last_at, coalesce(ARRAY(SELECT jsonb_array_elements_text(t.ids)), '{}')
      FROM unnest(${tallies.map((t) => t.minute)}::timestamptz[], ${tallies.map((t) => t.reason)}::text[],
                  ${tallies.map((t) => t.count)}::int[], ${tallies.map((t) => t.firstAt)}::timestamptz[],
                  ${tallies.map((t) => t.lastAt)}::timestamptz[],
                  ${tallies.map((t) => JSON.stringify(t.deliveryIds))}::jsonb[]) AS t(minute, reason, count, first_at, last_at, ids)
      ON CONFLICT (minute, reason) DO UPDATE SET
        count = webhook_rejections.count + EXCLUDED.count,
        first_at = least(webhook_rejections.first_at, EXCLUDED.first_at),
        last_at = greatest(webhook_rejections.last_at, EXCLUDED.last_at),
        delivery_ids = (webhook_rejections.delivery_ids || EXCLUDED.delivery_ids)[1:${MAX_DELIVERY_IDS}]`;
    if (Date.now() - lastRetention > RETENTION_EVERY_MS) {
      lastRetention = Date.now();
      await db().$executeRaw`DELETE FROM webhook_rejections WHERE minute < now() - make_interval(days => ${RETENTION_DAYS})`;
    }
  } catch (error) {
    // Put them back (merged with any counted meanwhile) for the next flush; memory stays bounded by
    // reasons × minutes, and a database that is away is already reported elsewhere.
    for (const t of tallies) {
      const key = `${t.minute.getTime()}:${t.reason}`;
      const now = pending.get(key);
      pending.set(key, now ? { ...t, count: t.count + now.count, lastAt: now.lastAt, deliveryIds: [...t.deliveryIds, ...now.deliveryIds].slice(0, MAX_DELIVERY_IDS) } : t);
    }
    logger.warn({ err: error instanceof Prisma.PrismaClientKnownRequestError ? error.code : String(error), tallies: tallies.length }, "webhook rejection counts not written yet");
    timer ??= setTimeout(() => {
      timer = undefined;
      void flushRejections();
    }, FLUSH_INTERVAL_MS).unref();
  }
}
