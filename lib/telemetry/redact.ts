// What a span may carry out of the process: no token, code, secret, authorization header or cookie,
// ever (docs/security.md). The app's own spans are built without them (lib/telemetry/index.ts), but
// spans also come from code the app does not write:
//
//   - Next.js's request span records `http.target`, the path WITH its query: on the registered
//     redirect_uri that is `/oauth/callback?code=...&state=...` (contract §5.3), the authorization code;
//   - Next.js's fetch span is named `fetch GET <full URL>` and records `http.url`;
//   - the undici instrumentation (fetch from this process: the token endpoint, the partner API)
//     records `url.full` and `url.query`.
//
// So every span passes through `redactSpan` on its way to the exporter (RedactingSpanExporter): URL
// attributes lose their query, fragment and user info; `url.query` and any header attribute that can
// carry a credential are dropped; and every other string (span and event names, attributes, exception
// messages) has `name=value` pairs of credential-like names and `Bearer`/`Basic` credentials blanked.
// Hand-written because the SDK has no redaction hook of its own; it works on the finished span, so
// nothing that records attributes can slip past it.
import "server-only";
import type { Attributes, AttributeValue } from "@opentelemetry/api";
import type { ReadableSpan, SpanExporter, TimedEvent } from "@opentelemetry/sdk-trace";

/** Attributes that hold a URL or a request target: kept without query, fragment or user info. */
const URL_ATTRIBUTES = new Set(["http.url", "http.target", "url.full", "url.original", "http.request.url", "next.url"]);
/** Attributes dropped whole: the query on its own, and headers that can carry a credential. */
const DROPPED_ATTRIBUTES = /^(url\.query|http\.(request|response)\.header\.(authorization|proxy-authorization|cookie|set-cookie|x-[a-z-]*(token|secret|key|signature)[a-z-]*))$/i;
/** `name=value` pairs whose value is a credential (OAuth 2.0 parameters, RFC 6749 §4.1.2, §4.1.3, §5.1, §6). */
const CREDENTIAL_PAIRS = /\b(code|access_token|refresh_token|id_token|token|client_secret|client_assertion|password|secret|ticket|signature)=([^&\s"'#]+)/gi;
/** HTTP credentials as they appear in an Authorization header (RFC 6750 §2.1, RFC 7617). */
const HTTP_CREDENTIALS = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

export const REDACTED = "[redacted]";

/** A string with credential pairs and HTTP credentials blanked. */
export function redactText(text: string): string {
  return text.replace(CREDENTIAL_PAIRS, `$1=${REDACTED}`).replace(HTTP_CREDENTIALS, `$1 ${REDACTED}`);
}

/**
 * A URL or request target without its query, fragment and user info: `https://h/p?code=x` becomes
 * `https://h/p`, `/oauth/callback?code=x` becomes `/oauth/callback`. The path is kept (the route is
 * what an operator of the app needs to read a trace); a query is never needed to read one.
 */
export function redactUrl(value: string): string {
  if (URL.canParse(value)) {
    const url = new URL(value);
    url.search = "";
    url.hash = "";
    url.username = "";
    url.password = "";
    return url.toString();
  }
  return redactText(value.replace(/[?#].*$/s, ""));
}

function redactValue(key: string, value: AttributeValue): AttributeValue {
  if (typeof value === "string") return URL_ATTRIBUTES.has(key) ? redactUrl(value) : redactText(redactUrlsIn(value));
  if (Array.isArray(value)) return value.map((item) => (typeof item === "string" ? redactText(redactUrlsIn(item)) : item)) as AttributeValue;
  return value;
}

/** Absolute URLs inside free text (a span named `fetch GET https://...?x=y`) lose their query too. */
function redactUrlsIn(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s"'<>]+/g, (url) => redactUrl(url));
}

export function redactAttributes(attributes: Attributes | undefined): Attributes {
  const clean: Attributes = {};
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || DROPPED_ATTRIBUTES.test(key)) continue;
    clean[key] = redactValue(key, value);
  }
  return clean;
}

/** A copy of the span, as the exporter will send it, with everything above applied. */
export function redactSpan(span: ReadableSpan): ReadableSpan {
  const events: TimedEvent[] = span.events.map((event) => ({ ...event, name: redactText(redactUrlsIn(event.name)), attributes: redactAttributes(event.attributes) }));
  return {
    name: redactText(redactUrlsIn(span.name)),
    kind: span.kind,
    spanContext: () => span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status.message ? { ...span.status, message: redactText(redactUrlsIn(span.status.message)) } : span.status,
    attributes: redactAttributes(span.attributes),
    links: span.links.map((link) => ({ ...link, attributes: redactAttributes(link.attributes) })),
    events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/** Wraps the real exporter (OTLP, or the tests' in-memory one): it only ever sees redacted spans. */
export class RedactingSpanExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: Parameters<SpanExporter["export"]>[1]): void {
    this.inner.export(spans.map(redactSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
