// Signed webhook delivery (contract §6). One function, sendWebhook(type, data), for every event type.
// Envelope (sandbox decision; the contract does not show it):
//   {"id":"whd_<random>","type":"install.created","delivered_at":<epoch seconds>,"data":{...}}
// delivered_at is inside the body, so the signature covers it.
// Header: X-Volt-Signature: sha256=<lowercase hex HMAC-SHA256 of the exact raw body bytes, key = webhook secret>.
// Best effort: a 10-second deadline, no retry; every attempt goes to the event log.
import type { SandboxClock } from "./clock.js";
import type { SandboxConfig } from "./config.js";
import { hmacSha256Hex, randomString } from "./crypto.js";
import type { SandboxStore } from "./store.js";

export const SIGNATURE_HEADER = "X-Volt-Signature";

export type WebhookEventType = "install.created" | "install.revoked" | "install.config.updated";

export interface InstallWebhookData {
  install_id: number;
  operator_id: number;
  slug: string;
}

export interface WebhookEnvelope {
  id: string;
  type: WebhookEventType;
  delivered_at: number;
  data: InstallWebhookData;
}

export interface DeliveryResult {
  id: string;
  type: WebhookEventType;
  installId: number;
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export interface WebhookSender {
  sendWebhook(type: WebhookEventType, data: InstallWebhookData): Promise<DeliveryResult>;
}

/** Signs a raw body exactly as the service does; exported so tests and docs can show the computation. */
export function signWebhookBody(secret: string, rawBody: string | Buffer): string {
  return `sha256=${hmacSha256Hex(secret, rawBody)}`;
}

export function createWebhookSender(
  config: SandboxConfig,
  clock: SandboxClock,
  store: SandboxStore,
  log: (line: string) => void,
): WebhookSender {
  return {
    async sendWebhook(type, data) {
      const envelope: WebhookEnvelope = {
        id: `whd_${randomString(16)}`,
        type,
        delivered_at: clock.nowEpochSeconds(),
        data,
      };
      const body = JSON.stringify(envelope);
      const attemptedAt = clock.now();
      const started = performance.now();
      let status: number | null = null;
      let error: string | null = null;
      try {
        const response = await fetch(config.webhook.url, {
          method: "POST",
          headers: { "Content-Type": "application/json", [SIGNATURE_HEADER]: signWebhookBody(config.webhook.secret, body) },
          body,
          redirect: "manual",
          signal: AbortSignal.timeout(config.webhook.timeoutMs),
        });
        status = response.status;
        await response.body?.cancel();
        if (status < 200 || status > 299) error = `non-2xx response (${status})`;
      } catch (caught) {
        error =
          caught instanceof Error && (caught.name === "TimeoutError" || caught.name === "AbortError")
            ? `no answer within ${config.webhook.timeoutMs} ms`
            : `transport error: ${caught instanceof Error ? (caught.cause instanceof Error ? caught.cause.message : caught.message) : String(caught)}`;
      }
      const latencyMs = Math.round(performance.now() - started);
      const ok = error === null;
      store.addEvent("webhook", attemptedAt, {
        delivery_id: envelope.id,
        event_type: type,
        install_id: data.install_id,
        operator_id: data.operator_id,
        url: config.webhook.url,
        status,
        error,
        latency_ms: latencyMs,
        outcome: ok ? "delivered" : "failed",
      });
      log(`webhook ${type} install=${data.install_id} ${ok ? `delivered (${status})` : `FAILED: ${error}`} in ${latencyMs} ms (not retried)`);
      return { id: envelope.id, type, installId: data.install_id, ok, status, error, latencyMs };
    },
  };
}
