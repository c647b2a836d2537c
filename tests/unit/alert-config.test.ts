// Outbound alerts' configuration (lib/env.ts, ALERT_*): off when unset; otherwise a URL and a strong
// Standard Webhooks secret together, over https, or the process refuses to start and says why.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { environmentProblems } from "@/lib/env";
import { alertsShape } from "@/lib/env/alerts";
import { generateLocalEnv } from "../../scripts/lib/local-env";

const local = generateLocalEnv({ app: 3000, sandbox: 4010 });
const { ALERT_WEBHOOK_URL: _url, ALERT_WEBHOOK_SECRET: _secret, ...withoutAlerts } = local;
void _url;
void _secret;
const base = { ...withoutAlerts, DATABASE_URL: "postgresql://u:p@localhost/app", NODE_ENV: "development" };
const alertProblems = (values: Record<string, string>) => environmentProblems({ ...base, ...values }).filter((p) => p.startsWith("ALERT_"));
const secretOf = (bytes: number) => `whsec_${randomBytes(bytes).toString("base64")}`;

describe("ALERT_WEBHOOK_URL and ALERT_WEBHOOK_SECRET", () => {
  it("are optional: unset, alerts are off and nothing is refused", () => {
    expect(alertProblems({})).toEqual([]);
  });

  it("accept what `npm run dev` and `npm test` write (the sandbox's alert sink, a fresh 32-byte secret)", () => {
    expect(local.ALERT_WEBHOOK_URL).toBe("http://localhost:4010/_sandbox/alert-sink");
    expect(alertProblems({ ALERT_WEBHOOK_URL: local.ALERT_WEBHOOK_URL!, ALERT_WEBHOOK_SECRET: local.ALERT_WEBHOOK_SECRET! })).toEqual([]);
    expect(alertProblems({ ALERT_WEBHOOK_URL: "https://hooks.slack.com/services/T0/B0/x", ALERT_WEBHOOK_SECRET: secretOf(24), ALERT_WEBHOOK_FORMAT: "slack" })).toEqual([]);
  });

  it("are set together or not at all", () => {
    expect(alertProblems({ ALERT_WEBHOOK_URL: "https://alerts.acme.eu/hook" })).toEqual(["ALERT_WEBHOOK_SECRET: is required with ALERT_WEBHOOK_URL (alerts are signed)"]);
    expect(alertProblems({ ALERT_WEBHOOK_SECRET: secretOf(32) })).toEqual([
      "ALERT_WEBHOOK_URL: is required with ALERT_WEBHOOK_SECRET (or unset both to turn alerts off)",
    ]);
  });

  it.each([
    ["a password", "correct horse battery staple"],
    ["too few bytes", secretOf(16)],
    ["too many bytes", secretOf(65)],
    ["no whsec_ prefix", randomBytes(32).toString("base64")],
    ["not base64", "whsec_!!!!not-base64!!!!not-base64!!!!"],
  ])("refuse a weak or malformed secret (%s), saying how to make one", (_case, secret) => {
    expect(alertProblems({ ALERT_WEBHOOK_URL: "https://alerts.acme.eu/hook", ALERT_WEBHOOK_SECRET: secret })).toEqual([
      expect.stringMatching(/^ALERT_WEBHOOK_SECRET: must be "whsec_" and 24 to 64 random bytes in base64: generate one with/),
    ]);
  });

  it("refuse what is not an http(s) URL, plain http off this machine, and any http in a deployment", () => {
    const secret = secretOf(32);
    expect(alertProblems({ ALERT_WEBHOOK_URL: "alerts.acme.eu/hook", ALERT_WEBHOOK_SECRET: secret })).toHaveLength(1);
    expect(alertProblems({ ALERT_WEBHOOK_URL: "ftp://alerts.acme.eu/hook", ALERT_WEBHOOK_SECRET: secret })).toHaveLength(1);
    expect(alertProblems({ ALERT_WEBHOOK_URL: "http://alerts.acme.eu/hook", ALERT_WEBHOOK_SECRET: secret })).toEqual([
      "ALERT_WEBHOOK_URL: plain http is allowed only for localhost (use https)",
    ]);
    const deployed = { NODE_ENV: "production", APP_URL: "https://partner.acme-charging.eu", ALERT_WEBHOOK_SECRET: secret };
    expect(alertProblems({ ...deployed, ALERT_WEBHOOK_URL: "http://localhost:9000/relay" })).toEqual(["ALERT_WEBHOOK_URL: must use https in production"]);
    expect(alertProblems({ ...deployed, ALERT_WEBHOOK_URL: "https://alerts.acme.eu/hook" })).toEqual([]);
  });

  it("ALERT_WEBHOOK_FORMAT is standard or slack; ALERT_SYNC_FAILURES 1 to 100", () => {
    expect(alertProblems({ ALERT_WEBHOOK_FORMAT: "teams" })).toHaveLength(1);
    expect(alertProblems({ ALERT_SYNC_FAILURES: "0" })).toHaveLength(1);
    expect(alertProblems({ ALERT_SYNC_FAILURES: "5" })).toEqual([]);
  });

  it("ALERT_DIGEST_THRESHOLD is at least 1, ALERT_DIGEST_WINDOW_SECONDS 10 s to a day; both default (20, 600)", () => {
    expect(alertProblems({ ALERT_DIGEST_THRESHOLD: "0" })).toHaveLength(1);
    expect(alertProblems({ ALERT_DIGEST_WINDOW_SECONDS: "5" })).toHaveLength(1);
    expect(alertProblems({ ALERT_DIGEST_WINDOW_SECONDS: "86401" })).toHaveLength(1);
    expect(alertProblems({ ALERT_DIGEST_THRESHOLD: "50", ALERT_DIGEST_WINDOW_SECONDS: "300" })).toEqual([]);
    expect(alertsShape.ALERT_DIGEST_THRESHOLD.parse(undefined)).toBe(20);
    expect(alertsShape.ALERT_DIGEST_WINDOW_SECONDS.parse(undefined)).toBe(600);
  });
});
