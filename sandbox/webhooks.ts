// Signed webhook delivery (contract §6). One function, sendWebhook(type, data), for every event type.
// Envelope (sandbox decision; the contract does not show it):
//   {"id":"whd_<random>","type":"install.created","delivered_at":<epoch seconds>,"data":{...}}
// delivered_at is inside the body, so the signature covers it.
// Header: X-Volt-Signature: sha256=<lowercase hex HMAC-SHA256 of the exact raw body bytes, key = webhook secret>.
// Best effort: a 10-second deadline, no retry; every attempt goes to the event log (type "webhook").
// Each delivery is kept (newest 1,000) so the service operator can replay it on request (contract §6), and the
// control API can arm delivery modes for the next deliveries of a type: drop, late (stale delivered_at), twice.
//
// delivered_at is the wall clock, NOT the sandbox clock (README decision 30). The sandbox clock's offset
// fast-forwards lifetimes (codes, tokens, consent requests, rate windows); it does not model a service whose
// wall clock is wrong. The app checks delivered_at against its own real clock (contract §6.4), so signing with
// the moved clock would make every delivery look stale after a test moves time. A stale delivery is asked for
// explicitly with the `late` mode; a service whose wall clock is off, with the wall-clock skew (decision 60).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { z } from "zod";
import type { SandboxClock } from "./clock.js";
import type { SandboxConfig } from "./config.js";
import { hmacSha256Hex, randomString } from "./crypto.js";
import { Checks } from "./handshake.js";
import { WEBHOOK_EVENT_TYPES } from "./store.js";
import type { DeliveryRecord, EventValue, SandboxStore, WebhookData, WebhookEventType } from "./store.js";

export const SIGNATURE_HEADER = "X-Volt-Signature";
export type { WebhookEventType, WebhookData } from "./store.js";

export interface WebhookEnvelope {
  id: string;
  type: WebhookEventType;
  delivered_at: number;
  data: WebhookData;
}

// ----- delivery modes ------------------------------------------------------------------------------------------

export const WEBHOOK_MODES = ["drop", "late", "twice"] as const;
export type WebhookMode = (typeof WEBHOOK_MODES)[number];
export const DEFAULT_LATE_SECONDS = 600;

export const webhookModeRequestSchema = z
  .object({
    type: z.enum(WEBHOOK_EVENT_TYPES),
    mode: z.enum(WEBHOOK_MODES),
    count: z.number().int().min(1).max(10_000).default(1),
    lateSeconds: z.number().int().min(1).max(366 * 24 * 3600).optional(),
  })
  .strict()
  .refine((m) => m.lateSeconds === undefined || m.mode === "late", { message: "lateSeconds applies to mode late only", path: ["lateSeconds"] });
export type WebhookModeRequest = z.infer<typeof webhookModeRequestSchema>;

export interface ArmedWebhookMode {
  type: WebhookEventType;
  mode: WebhookMode;
  remaining: number;
  /** late only. */
  lateSeconds: number | null;
}

/** Armed modes, in the order they were armed; the first one matching a delivery's type applies (in memory only). */
class WebhookModes {
  private armed: ArmedWebhookMode[] = [];

  arm(request: WebhookModeRequest): ArmedWebhookMode {
    const entry: ArmedWebhookMode = {
      type: request.type,
      mode: request.mode,
      remaining: request.count,
      lateSeconds: request.mode === "late" ? (request.lateSeconds ?? DEFAULT_LATE_SECONDS) : null,
    };
    this.armed.push(entry);
    return { ...entry };
  }

  list(): ArmedWebhookMode[] {
    return this.armed.map((m) => ({ ...m }));
  }

  clear(): void {
    this.armed = [];
  }

  take(type: WebhookEventType): { mode: WebhookMode; lateSeconds: number } | null {
    const index = this.armed.findIndex((m) => m.type === type);
    const entry = this.armed[index];
    if (!entry) return null;
    entry.remaining -= 1;
    if (entry.remaining <= 0) this.armed.splice(index, 1);
    return { mode: entry.mode, lateSeconds: entry.lateSeconds ?? 0 };
  }
}

// ----- sending -------------------------------------------------------------------------------------------------

/** original: the first send of a delivery; duplicate: the second send of mode "twice"; replay: on request. */
export type AttemptKind = "original" | "duplicate" | "replay";

export interface AttemptResult {
  kind: AttemptKind;
  deliveredAt: number;
  outcome: "delivered" | "failed" | "dropped";
  status: number | null;
  error: string | null;
  latencyMs: number | null;
  /**
   * true when the app closed the connection while the body was being written, before an answer could be read: an app
   * that refuses a large body unread (an ordinary HTTP server: 413, then close) cannot have acted on it. Its answer,
   * when it could be read first, is the status as usual.
   */
  uploadCut: boolean;
}

export interface DeliveryResult {
  id: string;
  type: WebhookEventType;
  installId: number;
  /** The mode applied to this delivery, if any. */
  mode: WebhookMode | null;
  /** One per HTTP attempt (two for "twice"; one "dropped" entry, without HTTP, for "drop"). */
  attempts: AttemptResult[];
  /** true when at least one attempt got a 2xx. */
  ok: boolean;
}

/** What a delivery is part of: `handshake` names the install handshake that sent it (README decision 52). */
export interface DeliveryContext {
  handshake?: string | null;
}

export interface WebhookSender {
  sendWebhook(type: WebhookEventType, data: WebhookData, context?: DeliveryContext): Promise<DeliveryResult>;
  /** Sends a kept delivery again: same id, type and data, a new delivered_at, freshly signed. null if unknown. */
  replay(deliveryId: string): Promise<DeliveryResult | null>;
  /** The exact bytes and signature of a kept delivery's original attempt, sent again (README decision 58). null if unknown. */
  resendCaptured(deliveryId: string): Promise<DeliveryResult | null>;
  /** A delivery the service would never send: forged, unsigned, stale, future-dated or oversize (README decision 58). */
  sendCrafted(request: CraftedDeliveryRequest): Promise<DeliveryResult>;
  modes: Pick<WebhookModes, "arm" | "list" | "clear">;
}

// ----- crafted deliveries: what an attacker or a broken network sends (README decision 58) ---------------------

export const craftedDeliveryRequestSchema = z
  .object({
    type: z.enum(WEBHOOK_EVENT_TYPES),
    data: z.object({ install_id: z.number().int(), operator_id: z.number().int() }).catchall(z.unknown()),
    /** valid: signed with the webhook secret; forged: signed with another key; missing: no signature header. */
    signature: z.enum(["valid", "forged", "missing"]).default("valid"),
    /** delivered_at = wall clock + this (negative: stale, positive: from the future). */
    deliveredAtOffsetSeconds: z.number().int().min(-366 * 24 * 3600).max(366 * 24 * 3600).default(0),
    /** Extra bytes of padding inside the signed body, to make it oversize (up to 8 MiB). */
    padBytes: z.number().int().min(0).max(8 * 1024 * 1024).default(0),
  })
  .strict();
export type CraftedDeliveryRequest = z.input<typeof craftedDeliveryRequestSchema>;
export type CraftedVariant = "forged" | "missing" | "stale" | "future" | "oversize" | "valid" | "captured";

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
  const modes = new WebhookModes();
  /** Whole seconds since the epoch on the service's wall clock: what delivered_at carries (see the top of this file). */
  const wallClockEpochSeconds = () => Math.floor(clock.wallNowMs() / 1000);

  /**
   * A handshake's delivery also says how it was signed (the header's name, never the secret) and what the sandbox
   * checked of the app's answer (README decision 52). Other deliveries leave these out: a bulk of 10,000 stays small.
   */
  function handshakeFields(mode: WebhookMode | null, result: AttemptResult, handshake: string | null): Record<string, EventValue> {
    if (!handshake) return {};
    const checks = new Checks();
    if (result.outcome !== "dropped") {
      checks.verify(result.outcome === "delivered", `the app answered 2xx within ${config.webhook.timeoutMs} ms${result.error ? ` (${result.error})` : ""}`);
    }
    return {
      handshake,
      checks: checks.list(),
      results:
        result.outcome === "dropped"
          ? ["not sent: delivery mode drop (kept for replay)"]
          : [
              `POST ${config.webhook.url}, Content-Type: application/json`,
              `signed: ${SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of the exact body bytes, key WEBHOOK_SECRET>`,
              `delivered_at inside the signed body: the wall clock${mode === "late" ? ", set in the past (delivery mode late)" : ""}`,
              "no retry (best effort)",
            ],
      answer: result.outcome === "dropped" ? "none (not sent)" : result.status !== null ? `the app answered ${result.status} in ${result.latencyMs} ms` : `no answer: ${result.error ?? "unknown"}`,
    };
  }

  function logAttempt(delivery: DeliveryRecord, mode: WebhookMode | null, result: AttemptResult, at: Date, handshake: string | null = null, crafted: CraftedVariant | null = null): void {
    store.addEvent("webhook", at, {
      // A crafted delivery (README decision 58) says what it was; the service's own deliveries carry no such field.
      ...(crafted ? { crafted } : {}),
      delivery_id: delivery.id,
      event_type: delivery.type,
      install_id: delivery.data.install_id,
      operator_id: delivery.data.operator_id,
      url: config.webhook.url,
      kind: result.kind,
      mode,
      delivered_at: result.deliveredAt,
      status: result.status,
      error: result.error,
      latency_ms: result.latencyMs,
      upload_cut: result.uploadCut,
      outcome: result.outcome,
      ...handshakeFields(mode, result, handshake),
    });
    const what =
      result.outcome === "dropped"
        ? "DROPPED (mode drop: not sent)"
        : result.outcome === "delivered"
          ? `delivered (${result.status})`
          : `FAILED: ${result.error ?? "unknown"}`;
    log(`webhook ${delivery.type} ${delivery.id} install=${delivery.data.install_id} [${result.kind}${mode ? `, ${mode}` : ""}] ${what}${result.latencyMs !== null ? ` in ${result.latencyMs} ms` : ""} (not retried)`);
  }

  /**
   * One HTTP POST of exact bytes; never throws. `signature`: the header's value, or null for none (crafted deliveries
   * only; the service always signs with the webhook secret).
   */
  async function post(
    delivery: DeliveryRecord,
    body: string,
    deliveredAt: number,
    kind: AttemptKind,
    mode: WebhookMode | null,
    handshake: string | null = null,
    signature: string | null = signWebhookBody(config.webhook.secret, body),
    crafted: CraftedVariant | null = null,
  ): Promise<AttemptResult> {
    const attemptedAt = clock.now();
    const started = performance.now();
    const sent = await postOnce(config.webhook.url, body, signature, config.webhook.timeoutMs);
    const latencyMs = Math.round(performance.now() - started);
    const error =
      sent.status !== null
        ? sent.status < 200 || sent.status > 299
          ? `non-2xx response (${sent.status})`
          : null
        : sent.timedOut
          ? `no answer within ${config.webhook.timeoutMs} ms`
          : sent.uploadCut
            ? `connection closed by the app during the upload, before an answer (${sent.error})`
            : `transport error: ${sent.error}`;
    const result: AttemptResult = { kind, deliveredAt, outcome: error === null ? "delivered" : "failed", status: sent.status, error, latencyMs, uploadCut: sent.uploadCut };
    logAttempt(delivery, mode, result, attemptedAt, handshake, crafted);
    return result;
  }

  function envelopeBody(delivery: DeliveryRecord, deliveredAt: number): string {
    const envelope: WebhookEnvelope = { id: delivery.id, type: delivery.type, delivered_at: deliveredAt, data: delivery.data };
    // Pretty-printed, as many services send JSON (decision 53): a receiver that verifies the signature over
    // JSON.stringify(await request.json()) instead of the raw bytes fails here, not first in production.
    return JSON.stringify(envelope, null, 2);
  }

  function summary(delivery: DeliveryRecord, mode: WebhookMode | null, attempts: AttemptResult[]): DeliveryResult {
    return {
      id: delivery.id,
      type: delivery.type,
      installId: delivery.data.install_id,
      mode,
      attempts,
      ok: attempts.some((a) => a.outcome === "delivered"),
    };
  }

  return {
    modes,

    async sendWebhook(type, data, context = {}) {
      const handshake = context.handshake ?? null;
      const delivery: DeliveryRecord = { id: `whd_${randomString(16)}`, type, data, createdAt: clock.now().toISOString() };
      store.addDelivery(delivery);
      const applied = modes.take(type);
      const mode = applied?.mode ?? null;
      if (applied?.mode === "drop") {
        const dropped: AttemptResult = { kind: "original", deliveredAt: wallClockEpochSeconds(), outcome: "dropped", status: null, error: null, latencyMs: null, uploadCut: false };
        logAttempt(delivery, mode, dropped, clock.now(), handshake);
        return summary(delivery, mode, [dropped]);
      }
      const deliveredAt = wallClockEpochSeconds() - (applied?.mode === "late" ? applied.lateSeconds : 0);
      const body = envelopeBody(delivery, deliveredAt);
      const attempts = [await post(delivery, body, deliveredAt, "original", mode, handshake)];
      // "twice": the very same bytes and signature again, as a network-level duplicate would arrive.
      if (applied?.mode === "twice") attempts.push(await post(delivery, body, deliveredAt, "duplicate", mode, handshake));
      return summary(delivery, mode, attempts);
    },

    async resendCaptured(deliveryId) {
      const delivery = store.findDelivery(deliveryId);
      if (!delivery) return null;
      // The original attempt's delivered_at rebuilds the very bytes it sent (the envelope is deterministic), so the
      // signature is the one an eavesdropper captured: a replay attack, not the service's replay on request.
      const original = store.state.events.find((e) => e.type === "webhook" && e.detail.delivery_id === deliveryId && e.detail.kind === "original");
      const deliveredAt = typeof original?.detail.delivered_at === "number" ? original.detail.delivered_at : wallClockEpochSeconds();
      const attempt = await post(delivery, envelopeBody(delivery, deliveredAt), deliveredAt, "duplicate", null, null, undefined, "captured");
      return summary(delivery, null, [attempt]);
    },

    async sendCrafted(request) {
      const parsed = craftedDeliveryRequestSchema.parse(request);
      // Not kept for replay: the service never sent it.
      const delivery: DeliveryRecord = { id: `whd_${randomString(16)}`, type: parsed.type, data: parsed.data as WebhookData, createdAt: clock.now().toISOString() };
      const deliveredAt = wallClockEpochSeconds() + parsed.deliveredAtOffsetSeconds;
      const envelope: Record<string, unknown> = { id: delivery.id, type: delivery.type, delivered_at: deliveredAt, data: delivery.data };
      if (parsed.padBytes > 0) envelope.padding = "x".repeat(parsed.padBytes);
      const body = JSON.stringify(envelope, null, 2);
      const signature =
        parsed.signature === "missing" ? null : signWebhookBody(parsed.signature === "valid" ? config.webhook.secret : `forged-${randomString(16)}`, body);
      const variant: CraftedVariant =
        parsed.signature !== "valid"
          ? parsed.signature
          : parsed.padBytes > 0
            ? "oversize"
            : parsed.deliveredAtOffsetSeconds < 0
              ? "stale"
              : parsed.deliveredAtOffsetSeconds > 0
                ? "future"
                : "valid";
      const attempt = await post(delivery, body, deliveredAt, "original", null, null, signature, variant);
      return summary(delivery, null, [attempt]);
    },

    async replay(deliveryId) {
      const delivery = store.findDelivery(deliveryId);
      if (!delivery) return null;
      const deliveredAt = wallClockEpochSeconds();
      const attempt = await post(delivery, envelopeBody(delivery, deliveredAt), deliveredAt, "replay", null);
      return summary(delivery, null, [attempt]);
    },
  };
}

// ----- one POST ------------------------------------------------------------------------------------------------

// Connections are kept alive between deliveries, as fetch's pool did (a bulk of 10,000 sends 32 at a time).
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

interface PostOutcome {
  /** The app's status, when its answer's head could be read (also when it came before the upload ended). */
  status: number | null;
  /** Why there was no status. */
  error: string | null;
  timedOut: boolean;
  /** The app closed the connection while the body was being written, before any answer was read. */
  uploadCut: boolean;
}

/**
 * node:http rather than fetch: fetch drops an answer that arrives before the upload ends once the next write fails
 * (`write EPIPE`), which is how an ordinary HTTP server refuses a body over its limit (413, then close). Here the answer is
 * kept whichever comes first, and a connection cut during the upload is told apart from one that never answered.
 */
function postOnce(url: string, body: string, signature: string | null, timeoutMs: number, reuseRetry = true): Promise<PostOutcome> {
  // reuseRetry false: the resend, on a connection of its own (`agent: false`), never another pooled one.
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const target = URL.parse(url);
    if (!target) return resolve({ status: null, error: `not a URL: ${url}`, timedOut: false, uploadCut: false });
    const headers = { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)), ...(signature === null ? {} : { [SIGNATURE_HEADER]: signature }) };
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const agent = !reuseRetry ? false : target.protocol === "https:" ? agents.https : agents.http;
    const req = send(target, { method: "POST", headers, agent });
    let finished = false;
    let settled = false;
    const settle = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      settle({ status: null, error: null, timedOut: true, uploadCut: false });
      req.destroy();
    }, timeoutMs);
    let connected = false;
    req.on("socket", (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once(target.protocol === "https:" ? "secureConnect" : "connect", () => (connected = true));
    });
    req.on("finish", () => (finished = true));
    req.on("response", (res: IncomingMessage) => {
      settle({ status: res.statusCode ?? null, error: null, timedOut: false, uploadCut: false });
      res.on("error", () => undefined);
      // Answered before the upload ended: the rest of the body would go nowhere.
      res.on("end", () => finished || req.destroy());
      res.resume();
    });
    req.on("error", (caught: NodeJS.ErrnoException) => {
      // A kept-alive connection the app closed just as it was reused (its idle timeout) is reset before the request
      // reached it: sent again once on a new connection, as Node's http docs advise (`request.reusedSocket`). Not a
      // retry of the delivery: the app never read it.
      if (reuseRetry && req.reusedSocket && caught.code === "ECONNRESET" && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(postOnce(url, body, signature, Math.max(1, timeoutMs - (performance.now() - startedAt)), false));
        return;
      }
      // After an answer, a failing write is the app closing the connection on a body it refused: the answer stands.
      // Without one, the app closed the connection before it had the whole body (a kept-alive one it closed just as
      // it was reused reads the same): either way it cannot have acted on the body.
      const uploadCut = connected && !finished;
      settle({ status: null, error: caught.message, timedOut: false, uploadCut });
    });
    req.end(body);
  });
}
