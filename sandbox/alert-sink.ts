// The alert sink (decisions 50 and 51): somewhere for the app's outbound alerts to go in development and
// tests. Not part of the service the contract describes: the app's alerts go to the partner's own incident
// tool, and this plays that receiver, the way the webhook receiver in tests/sandbox plays the app.
//
//   POST   /_sandbox/alert-sink          takes one alert: keeps its raw body and headers, checks its Standard
//                                        Webhooks signature when ALERT_WEBHOOK_SECRET is known, answers 204
//                                        (or what an armed outage says)
//   GET    /_sandbox/alert-sink          what it took, oldest first, and the outage still armed
//   DELETE /_sandbox/alert-sink          forgets them
//   POST   /_sandbox/alert-sink/outage   {"failNext": n, "status"?: 503}: the next n alerts are answered with
//                                        that status (and kept, marked), so an app's retries can be tested
//
// The signature check is written here from the Standard Webhooks specification, not taken from the app or
// its library: an independent reading of the scheme, so that app and sandbox cannot share one mistake.
import { createHmac, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { z } from "zod";

/** Alerts kept at most (oldest dropped first): a sink left running for days stays small. */
export const ALERT_SINK_CAPACITY = 500;
/** A body larger than this is refused with 413 and not kept. */
export const ALERT_SINK_MAX_BYTES = 64 * 1024;
/** How far webhook-timestamp may be from the wall clock, each way (the Standard Webhooks libraries' default). */
export const ALERT_TIMESTAMP_TOLERANCE_SECONDS = 300;

/**
 * valid: signed with ALERT_WEBHOOK_SECRET; invalid: no v1 signature matches; stale: it matches but the
 * timestamp is outside the tolerance (a replay); missing: a header is missing; unchecked: the sandbox
 * does not know the secret.
 */
export type AlertSignatureCheck = "valid" | "invalid" | "stale" | "missing" | "unchecked";

export interface ReceivedAlert {
  seq: number;
  receivedAt: string;
  /** Every request header, names lower-cased. */
  headers: Record<string, string>;
  /** The raw body, as UTF-8 text, exactly as received. */
  body: string;
  /** The body parsed as JSON, or null when it is not JSON. */
  json: unknown;
  signature: AlertSignatureCheck;
  /** What the sink answered: 204, or an armed outage's status. */
  answeredStatus: number;
}

const outageSchema = z
  .object({
    failNext: z.number().int().min(0).max(1000),
    status: z.union([z.literal(429), z.number().int().min(500).max(599)]).optional(),
  })
  .strict();

/** The decoded key of a `whsec_<base64>` secret; null when the secret is not in that form. */
export function decodeAlertSecret(secret: string): Buffer | null {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  return match ? Buffer.from(match[1]!, "base64") : null;
}

/** Standard Webhooks: base64(HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")), any of the space-separated `v1,` entries. */
export function checkAlertSignature(key: Buffer | null, headers: Record<string, string>, rawBody: Buffer, nowMs: number): AlertSignatureCheck {
  if (!key) return "unchecked";
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures) return "missing";
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  const matches = signatures.split(" ").some((entry) => {
    const [version, value] = entry.split(",", 2);
    if (version !== "v1" || !value) return false;
    const presented = Buffer.from(value, "base64");
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
  if (!matches) return "invalid";
  const seconds = Number(timestamp);
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowMs / 1000 - seconds) > ALERT_TIMESTAMP_TOLERANCE_SECONDS) return "stale";
  return "valid";
}

export class AlertSink {
  private received: ReceivedAlert[] = [];
  private nextSeq = 1;
  /** Alerts still to be answered with `status` (decision 51). */
  outage = { failNext: 0, status: 503 };

  constructor(private readonly key: Buffer | null) {}

  take(headers: Record<string, string>, rawBody: Buffer, nowMs: number): ReceivedAlert {
    let json: unknown = null;
    try {
      json = JSON.parse(rawBody.toString("utf8"));
    } catch {
      json = null;
    }
    const failing = this.outage.failNext > 0;
    if (failing) this.outage.failNext -= 1;
    const entry: ReceivedAlert = {
      seq: this.nextSeq++,
      receivedAt: new Date(nowMs).toISOString(),
      headers,
      body: rawBody.toString("utf8"),
      json,
      signature: checkAlertSignature(this.key, headers, rawBody, nowMs),
      answeredStatus: failing ? this.outage.status : 204,
    };
    this.received.push(entry);
    if (this.received.length > ALERT_SINK_CAPACITY) this.received.splice(0, this.received.length - ALERT_SINK_CAPACITY);
    return entry;
  }

  list(): ReceivedAlert[] {
    return [...this.received];
  }

  /** Forgets every alert and disarms the outage (reset, DELETE). */
  clear(): void {
    this.received = [];
    this.outage = { failNext: 0, status: 503 };
  }

  get signatureChecked(): boolean {
    return this.key !== null;
  }
}

/**
 * What the sink's routes need of the sandbox's context (context.ts), spelled out here rather than
 * imported: context.ts holds an AlertSink, so importing it back would make a circle of imports, which
 * `npm run lint` refuses (.dependency-cruiser.mjs). The whole SandboxContext fits this shape.
 */
export type AlertSinkHost = { alertSink: AlertSink; log(line: string): void };

export function alertSinkRoutes(ctx: AlertSinkHost): Hono {
  const app = new Hono();
  const sink = ctx.alertSink;

  app.post("/", async (c) => {
    const raw = Buffer.from(await c.req.arrayBuffer());
    if (raw.length > ALERT_SINK_MAX_BYTES) return c.json({ error: `an alert is at most ${ALERT_SINK_MAX_BYTES} bytes` }, 413);
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((value, name) => (headers[name.toLowerCase()] = value));
    // Wall-clock time, not the sandbox clock: replay protection compares with the sender's real clock (as decision 30).
    const entry = sink.take(headers, raw, Date.now());
    const type = (entry.json as { type?: unknown } | null)?.type;
    ctx.log(`alert sink: #${entry.seq} ${typeof type === "string" ? type : "(no type)"}, signature ${entry.signature}, answered ${entry.answeredStatus}`);
    if (entry.answeredStatus !== 204) return c.json({ error: "alert sink outage (POST /_sandbox/alert-sink/outage)" }, entry.answeredStatus as 503);
    return c.body(null, 204);
  });

  app.get("/", (c) => c.json({ alerts: sink.list(), outage: sink.outage, signatureChecked: sink.signatureChecked }));

  app.delete("/", (c) => {
    sink.clear();
    return c.json({ alerts: [] });
  });

  app.post("/outage", async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      body = undefined;
    }
    const parsed = outageSchema.safeParse(body);
    if (!parsed.success) return c.json({ error: 'Expected {"failNext": 0-1000, "status"?: 429 or 500-599}' }, 400);
    sink.outage = { failNext: parsed.data.failNext, status: parsed.data.status ?? 503 };
    return c.json({ outage: sink.outage });
  });

  return app;
}
