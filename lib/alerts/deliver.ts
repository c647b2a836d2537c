// Delivering an alert: one signed POST to ALERT_WEBHOOK_URL, run by the job engine (lib/jobs/engine.ts).
//
// Signed with the Standard Webhooks scheme (https://www.standardwebhooks.com), so receivers can use
// any of its libraries: `webhook-id` (the alert's id, the same on every retry), `webhook-timestamp`
// (this attempt's time, in seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of
// "<id>.<timestamp>.<raw body>">`. A receiver checks the signature over the raw bytes and refuses a
// timestamp far from its clock (a replay), then drops an id it has already taken (a retry);
// docs/operations.md "Alerts" shows how in a few lines.
//
// A non-2xx answer, a timeout (HTTP_TIMEOUT_MS) or a network error throws: the job is retried with
// backoff, then dead-lettered (lib/jobs/queues.ts). What the receiver answered is logged in short,
// never the URL (a Slack webhook's URL is itself a secret) and never the secret.
import "server-only";
import { Webhook } from "standardwebhooks";
import { PRODUCT } from "@/lib/config/product";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { AlertSchema, slackBody, type Alert } from "./alert";

export class AlertDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AlertDeliveryError";
  }
}

/** The body as sent, for the configured format. */
export function alertBody(alert: Alert): string {
  return JSON.stringify(env().ALERT_WEBHOOK_FORMAT === "slack" ? slackBody(alert) : alert);
}

/** Sends one alert; resolves on a 2xx, throws AlertDeliveryError otherwise. `data` is the job's, parsed here. */
export async function deliverAlert(data: unknown): Promise<{ alertId: string; status: number }> {
  const { ALERT_WEBHOOK_URL, ALERT_WEBHOOK_SECRET, HTTP_TIMEOUT_MS } = env();
  const parsed = AlertSchema.safeParse((data as { alert?: unknown } | null)?.alert);
  if (!parsed.success) throw new AlertDeliveryError("the job's alert does not have the documented shape");
  const alert = parsed.data;
  if (!ALERT_WEBHOOK_URL || !ALERT_WEBHOOK_SECRET) {
    // Alerts were switched off after this one was queued: nothing to send it to.
    logger.warn({ alert: alert.type, alertId: alert.id }, `alert dropped (ALERT_WEBHOOK_URL is unset now): ${alert.summary}`);
    return { alertId: alert.id, status: 0 };
  }
  const body = alertBody(alert);
  const sentAt = new Date();
  // The library made for the scheme: it strips `whsec_`, decodes the key and formats `v1,<base64>`.
  const signature = new Webhook(ALERT_WEBHOOK_SECRET).sign(alert.id, sentAt, body);
  let response: Response;
  try {
    response = await fetch(ALERT_WEBHOOK_URL, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "User-Agent": PRODUCT.alertsUserAgent,
        "webhook-id": alert.id,
        "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
        "webhook-signature": signature,
      },
      body,
      redirect: "error", // a redirect could carry the signed body elsewhere
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
    });
    // Read (and drop) the answer, so the connection is reused; its content is the receiver's business.
    await response.arrayBuffer().catch(() => undefined);
  } catch (error) {
    const kind = error instanceof Error && error.name === "TimeoutError" ? "timeout" : "network error";
    logger.warn({ alert: alert.type, alertId: alert.id, kind }, "alert not delivered; it will be retried");
    throw new AlertDeliveryError(`the alert receiver did not answer (${kind})`);
  }
  if (!response.ok) {
    logger.warn({ alert: alert.type, alertId: alert.id, status: response.status }, "alert refused by the receiver; it will be retried");
    throw new AlertDeliveryError(`the alert receiver answered HTTP ${response.status}`);
  }
  logger.info({ alert: alert.type, alertId: alert.id, status: response.status }, "alert delivered");
  return { alertId: alert.id, status: response.status };
}
