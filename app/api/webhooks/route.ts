// POST /api/webhooks: install lifecycle webhooks (contract §6). The raw bytes are verified before
// anything parses them; lib/webhooks/receive.ts does the work. Every refusal before recording is
// counted for the console's webhook log (lib/webhooks/rejections.ts). Other methods get 405 from Next.js.
import { NextResponse } from "next/server";
import { ConnectionDeadlineError } from "@/lib/db/ingest-pool";
import { env } from "@/lib/env";
import { arrivedAt as requestArrivedAt } from "@/lib/http/arrival";
import { BodyTimeoutError, BodyTooLargeError, readBodyWithLimit } from "@/lib/http/read-body";
import { logger } from "@/lib/log";
import { receiveWebhook, refusedDeliveryId } from "@/lib/webhooks/receive";
import { noteRejection } from "@/lib/webhooks/rejections";
import { WEBHOOK_SIGNATURE_HEADER } from "@/lib/webhooks/signature";

export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<NextResponse> {
  // contract §6: the service waits 10 s for the answer; the recording deadline counts from the
  // request's arrival at the node server (lib/http/arrival.ts), not from here.
  const arrivedAt = requestArrivedAt(request.headers);
  let rawBody: Uint8Array;
  try {
    const { WEBHOOK_MAX_BODY_BYTES, WEBHOOK_READ_TIMEOUT_MS } = env();
    rawBody = await readBodyWithLimit(request, WEBHOOK_MAX_BODY_BYTES, { timeoutMs: WEBHOOK_READ_TIMEOUT_MS });
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      noteRejection("body_too_large");
      return NextResponse.json({ status: "body_too_large" }, { status: 413 });
    }
    // A sender that stalls mid-body: answer now, record nothing, and close the connection (the rest
    // of its body is not wanted). The service itself sends whole bodies at once (contract §6).
    if (error instanceof BodyTimeoutError) {
      logger.warn({ timeoutMs: error.timeoutMs }, "webhook body did not arrive in time; answered 408");
      noteRejection("body_timeout");
      return NextResponse.json({ status: "body_timeout" }, { status: 408, headers: { Connection: "close" } });
    }
    noteRejection("unreadable_body");
    return NextResponse.json({ status: "unreadable_body" }, { status: 400 });
  }
  const signature = request.headers.get(WEBHOOK_SIGNATURE_HEADER);
  try {
    // Recorded durably, with any follow-up work enqueued as a job in the same transaction (contract §6: 10 s).
    const { status, body } = await receiveWebhook(rawBody, signature, new Date(), { arrivedAt });
    return NextResponse.json(body, { status });
  } catch (error) {
    // Nothing was recorded: the delivery's id (when authentic) goes in the log line and the staff
    // webhook log, so staff can ask the service to replay just those (contract §6).
    const deliveryId = refusedDeliveryId(rawBody, signature);
    if (error instanceof ConnectionDeadlineError) {
      // A burst larger than the database can take in time: refuse inside the service's deadline (no
      // connection came in time to record it before then: lib/db/ingest-pool.ts), having recorded nothing; the
      // service logs the failure, and a replay on request brings it.
      logger.warn({ waitedMs: error.waitedMs, deliveryId }, "webhook not recorded before its deadline; answered 503");
    } else {
      // Our own failure (e.g. the database is down): nothing was recorded, say so honestly.
      logger.error({ err: error, deliveryId }, "webhook could not be processed; answered 503");
    }
    noteRejection("not_recorded", new Date(), deliveryId);
    // Retry-After: when the ingest expects to have worked through its queue (RFC 9110 §10.2.3).
    const retryAfter = error instanceof ConnectionDeadlineError ? { "Retry-After": String(error.retryAfterSeconds) } : undefined;
    return NextResponse.json({ status: "unavailable" }, { status: 503, headers: retryAfter });
  }
}
