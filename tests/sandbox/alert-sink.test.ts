// The alert sink (sandbox/alert-sink.ts, README decisions 50-51): the receiver the app's outbound alerts go to in
// development and tests. It keeps each alert's raw body and headers, checks its Standard Webhooks signature when it
// knows the app's secret, answers an armed outage's status, is emptied by reset, and shows on the console page.
import { createHmac, randomBytes } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import type { ReceivedAlert } from "../../sandbox/alert-sink.js";
import { control, controlRaw, resetSandbox, setUpTestSandbox } from "./helpers.js";

const KEY = randomBytes(32);
const SECRET = `whsec_${KEY.toString("base64")}`;

const env = setUpTestSandbox({ alertSecret: SECRET });
beforeEach(() => resetSandbox(env));

type SinkView = { alerts: ReceivedAlert[]; outage: { failNext: number; status: number }; signatureChecked: boolean };

/** Signed as the Standard Webhooks specification says: base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")). */
function signedHeaders(body: string, options: { id?: string; timestamp?: number; key?: Buffer } = {}): Record<string, string> {
  const id = options.id ?? "alert_00000000-0000-4000-8000-000000000001";
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const signature = createHmac("sha256", options.key ?? KEY).update(`${id}.${timestamp}.${body}`).digest("base64");
  return { "Content-Type": "application/json", "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}

function post(body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${env.url}/_sandbox/alert-sink`, { method: "POST", headers, body });
}

describe("the alert sink", () => {
  it("keeps the raw body and headers of each alert, in order, with its signature checked", async () => {
    // Spacing the app's JSON.stringify would never produce: the raw bytes are what is kept and checked.
    const first = '{"type":"install.needs_reauth",  "summary":"Operator 1001 needs re-authorization"}';
    const second = '{"type":"install.recovered","summary":"Operator 1001 recovered"}';
    expect((await post(first, signedHeaders(first))).status).toBe(204);
    expect((await post(second, signedHeaders(second, { id: "alert_2" }))).status).toBe(204);

    const view = await control<SinkView>(env, "GET", "/alert-sink");
    expect(view.signatureChecked).toBe(true);
    expect(view.alerts.map((a) => [a.seq, a.body, a.signature, a.answeredStatus])).toEqual([
      [1, first, "valid", 204],
      [2, second, "valid", 204],
    ]);
    expect(view.alerts[0]!.json).toEqual({ type: "install.needs_reauth", summary: "Operator 1001 needs re-authorization" });
    expect(view.alerts[1]!.headers["webhook-id"]).toBe("alert_2");
    expect(view.alerts[1]!.headers["content-type"]).toBe("application/json");
  });

  it("marks a wrong key or an altered body invalid, an old timestamp stale, missing headers missing; and keeps them all", async () => {
    const body = '{"type":"sync.failing"}';
    await post(body, signedHeaders(body, { key: randomBytes(32) }));
    await post(body, signedHeaders('{"type":"sync.recovered"}'));
    await post(body, signedHeaders(body, { timestamp: Math.floor(Date.now() / 1000) - 3600 }));
    await post(body, { "Content-Type": "application/json" });
    // Several signatures, space-separated (a key rotation): one that matches is enough.
    const rotated = signedHeaders(body);
    rotated["webhook-signature"] = `v1,${randomBytes(32).toString("base64")} ${rotated["webhook-signature"]}`;
    await post(body, rotated);

    const { alerts } = await control<SinkView>(env, "GET", "/alert-sink");
    expect(alerts.map((a) => a.signature)).toEqual(["invalid", "invalid", "stale", "missing", "valid"]);
  });

  it("answers an armed outage's status to the next n alerts (still kept, marked), then 204 again", async () => {
    expect(await control(env, "POST", "/alert-sink/outage", { failNext: 2 })).toEqual({ outage: { failNext: 2, status: 503 } });
    const body = '{"type":"client.circuit_open"}';
    expect((await post(body, signedHeaders(body))).status).toBe(503);
    expect((await post(body, signedHeaders(body))).status).toBe(503);
    expect((await post(body, signedHeaders(body))).status).toBe(204);
    await control(env, "POST", "/alert-sink/outage", { failNext: 1, status: 500 });
    expect((await post(body, signedHeaders(body))).status).toBe(500);

    const view = await control<SinkView>(env, "GET", "/alert-sink");
    expect(view.alerts.map((a) => a.answeredStatus)).toEqual([503, 503, 204, 500]);
    expect(view.outage.failNext).toBe(0);
  });

  it("refuses a bad outage request with 400 and the expected shape, and an oversized alert with 413 (not kept)", async () => {
    for (const bad of [{ failNext: -1 }, { failNext: 1, status: 200 }, { failNext: 1, extra: true }, "nonsense"]) {
      const response = await controlRaw(env, "POST", "/alert-sink/outage", bad);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(/failNext/);
    }
    expect((await post("x".repeat(65 * 1024), { "Content-Type": "application/json" })).status).toBe(413);
    expect((await control<SinkView>(env, "GET", "/alert-sink")).alerts).toEqual([]);
  });

  it("is emptied (and its outage disarmed) by DELETE and by reset", async () => {
    const body = '{"type":"sync.failing"}';
    await post(body, signedHeaders(body));
    await control(env, "DELETE", "/alert-sink");
    expect((await control<SinkView>(env, "GET", "/alert-sink")).alerts).toEqual([]);

    await post(body, signedHeaders(body));
    await control(env, "POST", "/alert-sink/outage", { failNext: 5 });
    await control(env, "POST", "/reset");
    const view = await control<SinkView>(env, "GET", "/alert-sink");
    expect(view.alerts).toEqual([]);
    expect(view.outage.failNext).toBe(0);
    // Numbering goes on: a test that reads "the newest" never confuses an alert from before the reset with a new one.
    await post(body, signedHeaders(body));
    expect((await control<SinkView>(env, "GET", "/alert-sink")).alerts[0]!.seq).toBeGreaterThan(2);
  });

  it("shows the newest alerts on the app-owner console, with their type, summary and signature check", async () => {
    expect(await (await fetch(`${env.url}/console`)).text()).toContain("No alert yet");
    const body = JSON.stringify({ type: "install.reinstall_needed", summary: "Nordic <b>Charging</b> needs a re-install" });
    await post(body, signedHeaders(body));
    const page = await (await fetch(`${env.url}/console`)).text();
    expect(page).toContain("Alerts received");
    expect(page).toContain("<code>install.reinstall_needed</code>");
    // The summary is the app's text: escaped, never markup.
    expect(page).toContain("Nordic &lt;b&gt;Charging&lt;/b&gt; needs a re-install");
    expect(page).toMatch(/<span class="ok">valid<\/span>/);
  });
});

describe("the alert sink without the app's secret", () => {
  const plain = setUpTestSandbox();
  it("keeps alerts with their signature unchecked", async () => {
    await fetch(`${plain.url}/_sandbox/alert-sink`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    const view = await control<SinkView>(plain, "GET", "/alert-sink");
    expect(view.signatureChecked).toBe(false);
    expect(view.alerts.map((a) => a.signature)).toEqual(["unchecked"]);
  });
});
