// The redaction every exported span goes through (lib/telemetry/redact.ts): the shapes in which
// Next.js and the fetch instrumentation record URLs, and credentials in free text.
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { redactSpan, redactText, redactUrl } from "@/lib/telemetry/redact";

function spanWith(fields: Partial<ReadableSpan>): ReadableSpan {
  return {
    name: "span",
    kind: SpanKind.INTERNAL,
    spanContext: () => ({ traceId: "0".repeat(32), spanId: "1".repeat(16), traceFlags: 1 }),
    startTime: [0, 0],
    endTime: [0, 1],
    status: { code: SpanStatusCode.UNSET },
    attributes: {},
    links: [],
    events: [],
    duration: [0, 1],
    ended: true,
    resource: {} as ReadableSpan["resource"],
    instrumentationScope: { name: "test" },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...fields,
  };
}

describe("redactUrl", () => {
  it("drops the query, the fragment and user info of an absolute URL", () => {
    expect(redactUrl("https://user:pw@app.example.com/oauth/callback?code=abc&state=xyz#frag")).toBe("https://app.example.com/oauth/callback");
  });
  it("drops the query of a request target (Next.js's http.target)", () => {
    expect(redactUrl("/oauth/callback?code=abc&state=xyz")).toBe("/oauth/callback");
  });
});

describe("redactText", () => {
  it("blanks OAuth credential pairs and HTTP credentials, and leaves the rest", () => {
    expect(redactText("grant_type=refresh_token&refresh_token=r1.secret&client_secret=s3")).toBe("grant_type=refresh_token&refresh_token=[redacted]&client_secret=[redacted]");
    expect(redactText("Authorization: Bearer eyJhbGciOi.x.y")).toBe("Authorization: Bearer [redacted]");
    expect(redactText("charge point 42 synced")).toBe("charge point 42 synced");
  });
});

describe("redactSpan", () => {
  it("Next.js's request and fetch spans, the fetch instrumentation's: no code, token or header survives", () => {
    const span = redactSpan(
      spanWith({
        name: "fetch GET https://idp.example.com/authorize?code=c0de&x=1",
        attributes: {
          "http.target": "/oauth/callback?code=c0de&state=st4te",
          "http.url": "https://app.example.com/oauth/callback?code=c0de",
          "url.full": "https://api.example.com/api/v1/charges?page=2&access_token=t0ken",
          "url.query": "?page=2&access_token=t0ken",
          "url.path": "/api/v1/charges",
          "http.request.header.authorization": ["Bearer t0ken"],
          "http.request.header.cookie": ["session=s3ss"],
          "http.response.status_code": 200,
          "exception.message": "failed: https://x.example.com/cb?code=c0de",
        },
        events: [{ name: "exception", time: [0, 0], attributes: { "exception.message": "token=t0ken rejected" } }],
        status: { code: SpanStatusCode.ERROR, message: "Bearer t0ken refused" },
      }),
    );
    const exported = JSON.stringify({ name: span.name, attributes: span.attributes, events: span.events, status: span.status });
    for (const secret of ["c0de", "st4te", "t0ken", "s3ss"]) expect(exported).not.toContain(secret);
    expect(span.name).toBe("fetch GET https://idp.example.com/authorize");
    expect(span.attributes).toMatchObject({
      "http.target": "/oauth/callback",
      "url.full": "https://api.example.com/api/v1/charges",
      "url.path": "/api/v1/charges",
      "http.response.status_code": 200,
    });
    expect(span.attributes["url.query"]).toBeUndefined();
    expect(span.attributes["http.request.header.authorization"]).toBeUndefined();
    expect(span.spanContext().spanId).toBe("1".repeat(16));
  });
});
