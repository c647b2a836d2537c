// Reads for the console's webhook log (/admin/webhooks): every delivery the app recorded (processed,
// ignored, or signed but invalid: lib/webhooks/receive.ts), and the deliveries it refused before
// recording anything, counted per minute and reason (lib/webhooks/rejections.ts).
//
// Bounded, indexed reads: recorded deliveries newest first by (received_at, id) (keyset pages), one
// delivery by its unique dedupe key, one install's by (event_type, install_id); refusals by
// (reason, minute) or the primary key's minute. The payload is never selected: the outcome and its
// detail say what staff need, and the payload is the operator's data.
import "server-only";
import { z } from "zod";
import { KeysetCursorSchema, cursorAfter } from "./keyset";
import { db } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import { REJECTION_REASONS, type RejectionReason } from "@/lib/webhooks/rejections";

export const WEBHOOK_LOG_PAGE_SIZE = 50;
/** Refusal rows (minute × reason) shown at most; older ones are summed in the totals. */
export const REJECTION_ROWS = 60;

/** What a recorded delivery's outcome means, in words. */
export const OUTCOME_WORDS: Record<string, string> = {
  processed: "Accepted and applied",
  ignored: "Accepted; an event type the app does not act on",
  invalid: "Signed, but its content was refused (answered 400)",
};

const isReason = (value: string): value is RejectionReason => value in REJECTION_REASONS;

const OUTCOMES = ["all", "processed", "ignored", "invalid", "rejected"] as const;
export type WebhookLogOutcome = (typeof OUTCOMES)[number];


/**
 * The log's query string. Anything unreadable falls back to its default: a stranger's address never
 * makes the page fail. `q` is a delivery id (the envelope's `id`), an install_id or an event type.
 */
export const WebhookLogQuerySchema = z.object({
  q: z
    .string()
    .trim()
    .max(200)
    // Control characters never belong in an id or a type (and PostgreSQL refuses NUL).
    .transform((value) => value.replace(/[\u0000-\u001f\u007f]/g, ""))
    .optional()
    .catch(undefined),
  outcome: z.enum(OUTCOMES).catch("all").default("all"),
  reason: z
    .string()
    .refine(isReason)
    .optional()
    .catch(undefined),
  after: KeysetCursorSchema.optional().catch(undefined),
});
export type WebhookLogQuery = z.infer<typeof WebhookLogQuerySchema>;

export function readWebhookLogQuery(searchParams: Record<string, string | string[] | undefined>): WebhookLogQuery {
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) || undefined;
  return WebhookLogQuerySchema.parse({ q: first(searchParams.q), outcome: first(searchParams.outcome), reason: first(searchParams.reason), after: first(searchParams.after) });
}

export type RecordedDelivery = {
  id: string;
  /** The envelope's delivery id, or null when it had none (deduplicated by the body's hash). */
  deliveryId: string | null;
  receivedAt: Date;
  deliveredAt: Date | null;
  eventType: string | null;
  installId: number | null;
  outcome: string;
  detail: string | null;
};

/** `deliveryIds`: for not_recorded, the signed deliveries' ids, to ask the service to replay (contract §6). */
export type RejectionRow = { minute: Date; reason: RejectionReason; count: number; firstAt: Date; lastAt: Date; deliveryIds: string[] };

export type WebhookLog = {
  deliveries: RecordedDelivery[];
  next: string | null;
  rejections: RejectionRow[];
  /** Refused deliveries per reason over the last 24 hours. */
  rejectedLastDay: Partial<Record<RejectionReason, number>>;
  query: WebhookLogQuery;
};

/** The delivery id inside a dedupe key (`id:…`, or `invalid:id:…` for a signed delivery refused for its content). */
function deliveryIdOf(dedupeKey: string): string | null {
  const match = /^(?:invalid:)?id:(.*)$/.exec(dedupeKey);
  return match ? match[1]! : null;
}

/** How `q` narrows the recorded deliveries: a delivery id (either key form), an install_id, or an event type. */
function searchWhere(q: string | undefined): Prisma.WebhookDeliveryWhereInput {
  if (!q) return {};
  const byId: Prisma.WebhookDeliveryWhereInput[] = [{ dedupeKey: `id:${q}` }, { dedupeKey: `invalid:id:${q}` }];
  if (/^\d{1,10}$/.test(q) && Number(q) <= 2 ** 31 - 1) return { OR: [...byId, { installId: Number(q) }] };
  return { OR: [...byId, { eventType: q }] };
}

/** One page of the log: recorded deliveries (unless only refusals are asked for) and the refusals. */
export async function fetchWebhookLog(query: WebhookLogQuery): Promise<WebhookLog> {
  const showRecorded = query.outcome !== "rejected" && !query.reason;
  const showRejected = (query.outcome === "all" || query.outcome === "rejected") && !query.q;
  const where: Prisma.WebhookDeliveryWhereInput = {
    ...searchWhere(query.q),
    ...(query.outcome !== "all" && query.outcome !== "rejected" ? { outcome: query.outcome } : {}),
    ...(query.after ? { AND: [{ OR: [{ receivedAt: { lt: query.after.at } }, { receivedAt: query.after.at, id: { lt: query.after.id } }] }] } : {}),
  };
  const dayAgo = new Date(Date.now() - 24 * 3600 * 1000);
  const [rows, rejections, totals] = await Promise.all([
    showRecorded
      ? db().webhookDelivery.findMany({
          where,
          select: { id: true, dedupeKey: true, receivedAt: true, deliveredAt: true, eventType: true, installId: true, outcome: true, detail: true },
          orderBy: [{ receivedAt: "desc" }, { id: "desc" }],
          take: WEBHOOK_LOG_PAGE_SIZE + 1,
        })
      : Promise.resolve([]),
    showRejected
      ? db().webhookRejection.findMany({
          where: query.reason ? { reason: query.reason } : {},
          orderBy: [{ minute: "desc" }, { reason: "asc" }],
          take: REJECTION_ROWS,
        })
      : Promise.resolve([]),
    showRejected
      ? db().webhookRejection.groupBy({ by: ["reason"], where: { minute: { gte: dayAgo } }, _sum: { count: true } })
      : Promise.resolve([]),
  ]);
  const page = rows.slice(0, WEBHOOK_LOG_PAGE_SIZE);
  const last = page.at(-1);
  return {
    deliveries: page.map(({ dedupeKey, ...row }) => ({ ...row, deliveryId: deliveryIdOf(dedupeKey) })),
    next: rows.length > WEBHOOK_LOG_PAGE_SIZE && last ? cursorAfter(last.receivedAt, last.id) : null,
    rejections: rejections.flatMap((row) => (isReason(row.reason) ? [{ ...row, reason: row.reason }] : [])),
    rejectedLastDay: Object.fromEntries(totals.map((t) => [t.reason, t._sum.count ?? 0])),
    query,
  };
}
