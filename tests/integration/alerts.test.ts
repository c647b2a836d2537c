// Outbound alerts (lib/alerts/, docs/operations.md "Alerts"): one signed alert per change of state
// (an install flagged or needing a re-install, the token circuit opened by invalid_client, a sync that
// keeps failing) and one when each recovers, delivered by a job to the sandbox's alert sink, retried
// while the sink is down. Deliveries are worked by hand in a separate process (tests/helpers/app-worker.ts
// `deliver-alerts`), as a worker or the cron route would.
import { createHmac } from "node:crypto";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import {
  approveInPortal,
  armApiFault,
  clearApiFaults,
  closeSql,
  control,
  expireAccessToken,
  installViaPortal,
  receivedAlerts,
  resetWorld,
  setAlertSinkOutage,
  sql,
  stack,
  type ReceivedAlert,
} from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

beforeEach(resetWorld);
afterAll(closeSql);

const BASE_SCOPES = ["charge-points:read", "charge-transactions:read"];
type CallSummary = { ok: number; errors: Record<string, number> };
type DeliverySummary = { delivered: number; failed: number; more: boolean };

/** Delivers what is queued, in a separate process. */
async function deliverAlerts(): Promise<DeliverySummary> {
  return resultOf<DeliverySummary>(await runAppWorker(["deliver-alerts"]));
}

type AlertJob = { id: string; state: string; singleton_key: string; start_after: Date; data: { alert: { id: string; type: string; incident: string } } };
const alertJobs = () => sql<AlertJob>("SELECT id, state::text, singleton_key, start_after, data FROM pgboss.job WHERE name = 'alert.deliver' ORDER BY created_on");

/** The documented fields, exactly (docs/operations.md "Alerts"). */
const ALERT_FIELDS = ["clientId", "consoleUrl", "details", "id", "incident", "install", "occurredAt", "status", "summary", "type"];

/**
 * Checks an alert as a receiver would, by hand from the Standard Webhooks specification (not with the
 * app's library): the HMAC-SHA256 over "<id>.<timestamp>.<raw body>" with the secret's decoded key,
 * a timestamp close to now, the id in the body; and that it carries no token or secret. Returns the body.
 */
function verifiedAlert(received: ReceivedAlert): Record<string, unknown> & { type: string; status: string; incident: string; summary: string } {
  const key = Buffer.from(process.env.ALERT_WEBHOOK_SECRET!.replace(/^whsec_/, ""), "base64");
  const { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature } = received.headers;
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${received.body}`).digest("base64");
  expect(signature).toBe(`v1,${expected}`);
  expect(Math.abs(Date.now() / 1000 - Number(timestamp))).toBeLessThan(300);
  // The sandbox's own, independent check agrees.
  expect(received.signature).toBe("valid");
  expect(received.headers["content-type"]).toBe("application/json");

  // Never a token (contract §2's `<brand>_at_/_rt_/_ac_`) or a secret of the app.
  expect(received.body).not.toMatch(/\b[a-z][a-z0-9]*_(?:at|rt|ac)_[A-Za-z0-9._~-]+/);
  for (const name of ["OAUTH_CLIENT_SECRET", "WEBHOOK_SECRET", "NEXTAUTH_SECRET", "ALERT_WEBHOOK_SECRET", "CRON_SECRET", "TOKEN_ENCRYPTION_KEYS"]) {
    expect(received.body, name).not.toContain(process.env[name]!);
  }
  const body = JSON.parse(received.body) as ReturnType<typeof verifiedAlert>;
  expect(Object.keys(body).sort()).toEqual(ALERT_FIELDS);
  expect(body.id).toBe(id);
  return body;
}

async function dashboard(sessionCookie: string) {
  return (await fetch(`${stack.appUrl}/dashboard/charge-points`, { headers: { cookie: sessionCookie } })).text();
}

describe("an install that needs re-authorization", () => {
  it("one signed install.needs_reauth alert however many 403s, then one install.recovered when the operator re-consents", async () => {
    const install = await installViaPortal(1001);
    await control("POST", "/app/scopes", { scopes: [...BASE_SCOPES, "teams:write"] });
    // Several page views meet 403 NEEDS_REAUTH (the first flags the install; the others find it flagged).
    await Promise.all([dashboard(install.sessionCookie), dashboard(install.sessionCookie), dashboard(install.sessionCookie)]);
    expect((await sql<{ status: string }>("SELECT status FROM installs WHERE id = $1", [install.installRowId]))[0]?.status).toBe("NEEDS_REAUTH");
    // Queued with the flag, not sent by the request that flagged it.
    expect(await receivedAlerts()).toEqual([]);
    expect((await alertJobs()).map((job) => job.data.alert.type)).toEqual(["install.needs_reauth"]);

    expect(await deliverAlerts()).toEqual({ delivered: 1, failed: 0, more: false });
    const [flagged] = await receivedAlerts();
    const alert = verifiedAlert(flagged!);
    const [operator] = await sql<{ operator_name: string | null }>("SELECT operator_name FROM installs WHERE id = $1", [install.installRowId]);
    expect(alert).toMatchObject({
      type: "install.needs_reauth",
      status: "firing",
      incident: `install:${install.installRowId}`,
      install: { rowId: install.installRowId, installId: install.installId, operatorId: "1001", operatorName: operator!.operator_name },
      clientId: null,
      details: { from: "ACTIVE", to: "NEEDS_REAUTH", cause: "api" },
      consoleUrl: `${stack.appUrl}/admin/installs/${install.installRowId}`,
    });
    expect(alert.summary).toContain(`install ${install.installId}`);
    expect(alert.summary).toMatch(/needs re-authorization/);
    expect(Date.parse(alert.occurredAt as string)).toBeLessThanOrEqual(Date.now());

    // More visits while flagged: no second alert.
    await dashboard(install.sessionCookie);
    expect(await deliverAlerts()).toEqual({ delivered: 0, failed: 0, more: false });

    // The operator approves at reauth_url; ten minutes on, a visit probes, finds the API answering, clears the flag.
    const [row] = await sql<{ reauth_url: string }>("SELECT reauth_url FROM installs WHERE id = $1", [install.installRowId]);
    const approved = await fetch(row!.reauth_url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "decision=approve", redirect: "manual" });
    expect(approved.status).toBe(303);
    await sql("UPDATE installs SET last_reconciled_at = now() - interval '11 minutes' WHERE id = $1", [install.installRowId]);
    expect(await dashboard(install.sessionCookie)).toContain('data-testid="charge-points"');

    expect(await deliverAlerts()).toEqual({ delivered: 1, failed: 0, more: false });
    const alerts = await receivedAlerts();
    expect(alerts).toHaveLength(2);
    expect(verifiedAlert(alerts[1]!)).toMatchObject({
      type: "install.recovered",
      status: "resolved",
      incident: `install:${install.installRowId}`,
      details: { from: "NEEDS_REAUTH", to: "ACTIVE" },
    });
  });
});

describe("an install whose refresh chain is gone", () => {
  it("one install.reinstall_needed alert from the refresh that found out, and install.recovered after the operator consents again", async () => {
    const { installRowId, installId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    // The identity provider rotates the refresh token but the answer is lost (500): the outcome is unknown.
    await control("POST", "/faults", { tokenEndpoint: { mode: "answer-then-fail", count: 1 } });
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).ok).toBe(0);
    // Later (the earlier attempt is surely over), the app settles it: the old access token is revoked, so the
    // refresh happened and its pair is lost: only a re-install helps.
    await sql("UPDATE token_grants SET refresh_started_at = now() - interval '5 minutes', access_token_expires_at = now() + interval '10 minutes' WHERE install_row_id = $1", [installRowId]);
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"])).errors).toEqual({ "NoUsableTokenError:reinstall_needed": 3 });
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "2"])).errors).toEqual({ "NoUsableTokenError:reinstall_needed": 2 });

    expect(await deliverAlerts()).toMatchObject({ delivered: 1, failed: 0 });
    const [alert] = (await receivedAlerts()).map(verifiedAlert);
    expect(alert).toMatchObject({
      type: "install.reinstall_needed",
      status: "firing",
      incident: `install:${installRowId}`,
      install: { rowId: installRowId, installId },
      details: { from: "ACTIVE", to: "REINSTALL_NEEDED", cause: "refresh" },
    });
    expect(alert!.summary).toMatch(/needs a re-install/);

    // The operator connects the app again from the portal: a new chain for the same install.
    const callback = await approveInPortal(1001);
    expect((await fetch(callback, { redirect: "manual" })).status).toBe(303);
    expect(await deliverAlerts()).toMatchObject({ delivered: 1, failed: 0 });
    const alerts = (await receivedAlerts()).map(verifiedAlert);
    expect(alerts.map((a) => [a.type, a.status, a.incident])).toEqual([
      ["install.reinstall_needed", "firing", `install:${installRowId}`],
      ["install.recovered", "resolved", `install:${installRowId}`],
    ]);
  }, scaled(60_000));
});

describe("a crash in the middle of refreshes", () => {
  it("three installs lose their refresh's answer to the app dying mid-refresh: staff get one alert for the incident, and one recovery when every operator has reconnected", async () => {
    const operators = [1001, 1002, 1003];
    const installs = [];
    for (const operatorId of operators) installs.push(await installViaPortal(operatorId));
    // Each refresh is answered by the identity provider, and the process dies before it stores the new pair.
    for (const { installRowId } of installs) {
      await expireAccessToken(installRowId, false);
      expect((await runAppWorker(["crash-after-answer", installRowId])).signal).toBe("SIGKILL");
    }
    // After the restart (every earlier attempt surely over), the app settles each one: the refresh happened and its pair is lost.
    await sql("UPDATE token_grants SET refresh_started_at = now() - interval '5 minutes', access_token_expires_at = now() + interval '10 minutes'");
    for (const { installRowId } of installs) {
      expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"])).errors).toEqual({ "NoUsableTokenError:reinstall_needed": 1 });
    }
    expect(await sql("SELECT status::text FROM installs WHERE status = 'REINSTALL_NEEDED'")).toHaveLength(3);

    expect(await deliverAlerts()).toMatchObject({ delivered: 1, failed: 0 });
    const [alert] = (await receivedAlerts()).map(verifiedAlert);
    expect(alert).toMatchObject({ type: "install.reinstall_needed", status: "firing", incident: `install:${installs[0]!.installRowId}` });
    expect(alert!.summary).toMatch(/lost/);

    // Each operator reconnects from the portal: nothing more until the last one, then one recovery for the incident.
    for (const operatorId of operators) {
      expect((await fetch(await approveInPortal(operatorId), { redirect: "manual" })).status).toBe(303);
      await deliverAlerts();
    }
    const alerts = (await receivedAlerts()).map(verifiedAlert);
    expect(alerts.map((a) => [a.type, a.status, a.incident])).toEqual([
      ["install.reinstall_needed", "firing", `install:${installs[0]!.installRowId}`],
      ["install.recovered", "resolved", `install:${installs[0]!.installRowId}`],
    ]);
    expect(alerts[1]!.details).toMatchObject({ installs: 3 });
  }, scaled(120_000));
});

describe("invalid_client", () => {
  it("one client.circuit_open alert when the client secret was re-issued, however many calls fail; client.circuit_closed once a token request succeeds", async () => {
    const { installRowId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    // The service operator re-issues the client: the app's configured secret is refused from now on.
    const { client_secret: newSecret } = await control<{ client_secret: string }>("POST", "/clients/rotate-secret");

    // Three calls at once share one refresh: invalid_client opens the circuit, and all three fail.
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "3"])).errors).toEqual({ TokenCircuitOpenError: 3 });
    // Staff try a wrong secret first: invalid_client again, still the same incident.
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"], { OAUTH_CLIENT_SECRET: "still-not-the-new-secret" })).errors).toEqual({ TokenCircuitOpenError: 1 });

    expect(await deliverAlerts()).toMatchObject({ delivered: 1, failed: 0 });
    const [opened] = (await receivedAlerts()).map(verifiedAlert);
    expect(opened).toMatchObject({
      type: "client.circuit_open",
      status: "firing",
      incident: `client:${process.env.OAUTH_CLIENT_ID}`,
      clientId: process.env.OAUTH_CLIENT_ID,
      install: null,
      consoleUrl: `${stack.appUrl}/admin`,
    });
    expect(opened!.summary).toMatch(/invalid_client/);
    expect(opened!.summary).not.toContain(newSecret);

    // The new secret is configured: the refresh succeeds and the circuit's incident closes.
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "2"], { OAUTH_CLIENT_SECRET: newSecret })).ok).toBe(2);
    expect(await deliverAlerts()).toMatchObject({ delivered: 1, failed: 0 });
    const alerts = (await receivedAlerts()).map(verifiedAlert);
    expect(alerts.map((a) => [a.type, a.status])).toEqual([
      ["client.circuit_open", "firing"],
      ["client.circuit_closed", "resolved"],
    ]);
    for (const alert of alerts) expect(JSON.stringify(alert)).not.toContain(newSecret);
  }, scaled(60_000));
});

describe("a sync that keeps failing", () => {
  it(`one sync.failing alert at the third failed run in a row (not before, not again), one sync.recovered when a run completes`, async () => {
    const { installRowId } = await installViaPortal(1001);
    // Every list request answers 500; no retries, so each run fails at once.
    await armApiFault({ path: "/", mode: "error500", count: 1000 });
    /** `n` sync runs one after the other in one process, each failing at its first request. */
    const failingRuns = async (n: number) =>
      expect(resultOf<{ outcomes: string[] }>(await runAppWorker(["sync-runs", installRowId, "100", String(n)], { API_MAX_RETRIES: "0" })).outcomes).toEqual(Array(n).fill("failed"));

    await failingRuns(2);
    expect(await alertJobs()).toEqual([]);
    await failingRuns(2); // the third raises it; the fourth finds the incident open already
    expect((await alertJobs()).map((job) => job.data.alert.type)).toEqual(["sync.failing"]);

    await clearApiFaults();
    expect(resultOf<{ outcome: string }>(await runAppWorker(["sync", installRowId, "100"])).outcome).toBe("completed");
    // Both wait in the queue, keyed by their incident: delivered in the order they happened, never the
    // recovery before the trouble (an incident tool would be left with an open incident).
    expect((await alertJobs()).map((job) => [job.data.alert.type, job.singleton_key])).toEqual([
      ["sync.failing", `sync:${installRowId}`],
      ["sync.recovered", `sync:${installRowId}`],
    ]);
    expect(await deliverAlerts()).toMatchObject({ delivered: 2, failed: 0 });
    const alerts = (await receivedAlerts()).map(verifiedAlert);
    expect(alerts.map((a) => [a.type, a.status, a.incident])).toEqual([
      ["sync.failing", "firing", `sync:${installRowId}`],
      ["sync.recovered", "resolved", `sync:${installRowId}`],
    ]);
    // Every list failed (each goes on after another list's failure: lib/sync/index.ts), so the alert names each.
    expect(alerts[0]!.details).toMatchObject({ consecutiveFailures: 3, lastFailure: "charge_points: unavailable, charges: unavailable" });
    expect(alerts[1]!.details).toMatchObject({ failedRunsBefore: 4 });

    // Counting starts again from zero: two more failures are below the threshold.
    await armApiFault({ path: "/", mode: "error500", count: 1000 });
    await failingRuns(2);
    expect((await alertJobs()).filter((job) => job.state !== "completed")).toEqual([]);
  }, scaled(60_000));
});

describe("a failing sync of an install that is uninstalled", () => {
  it("closes its incident with sync.recovered (reason revoked): no sync runs again, so no run could close it", async () => {
    const { installRowId, installId } = await installViaPortal(1002);
    await armApiFault({ path: "/", mode: "error500", count: 1000 });
    expect(resultOf<{ outcomes: string[] }>(await runAppWorker(["sync-runs", installRowId, "100", "3"], { API_MAX_RETRIES: "0" })).outcomes).toEqual(["failed", "failed", "failed"]);
    // The operator uninstalls: install.revoked reaches the app's webhook route, which revokes the install.
    await control("POST", `/installs/${installId}/revoke`);
    await expect.poll(async () => (await sql<{ status: string }>("SELECT status FROM installs WHERE id = $1", [installRowId]))[0]?.status).toBe("REVOKED");

    expect(await deliverAlerts()).toMatchObject({ delivered: 2, failed: 0 });
    const alerts = (await receivedAlerts()).map(verifiedAlert);
    expect(alerts.map((a) => [a.type, a.status, a.incident])).toEqual([
      ["sync.failing", "firing", `sync:${installRowId}`],
      ["sync.recovered", "resolved", `sync:${installRowId}`],
    ]);
    expect(alerts[1]!.details).toEqual({ failedRunsBefore: 3, reason: "revoked" });
    expect(alerts[1]!.summary).toMatch(/uninstalled/);
  });
});

describe("delivery", () => {
  it("while the receiver is down the job is retried with backoff, and the same alert (same webhook-id, signed afresh) arrives once it is back", async () => {
    const { installRowId } = await installViaPortal(1001);
    await setAlertSinkOutage(1);
    await expireAccessToken(installRowId, false);
    expect(resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"], { OAUTH_CLIENT_SECRET: "not-the-registered-secret" })).errors).toEqual({ TokenCircuitOpenError: 1 });

    expect(await deliverAlerts()).toEqual({ delivered: 0, failed: 1, more: false });
    const [job] = await alertJobs();
    expect(job).toMatchObject({ state: "retry" });
    // Backoff: the first retry is 30 to 60 seconds away (lib/jobs/queues.ts), not due again at once.
    expect(job!.start_after.getTime()).toBeGreaterThan(Date.now() + 20_000);
    expect(await deliverAlerts()).toEqual({ delivered: 0, failed: 0, more: false });
    expect(await receivedAlerts()).toHaveLength(1);

    // Later (the test skips the 30-second wait): delivered.
    await sql("UPDATE pgboss.job SET start_after = now() WHERE id = $1", [job!.id]);
    expect(await deliverAlerts()).toEqual({ delivered: 1, failed: 0, more: false });
    const attempts = await receivedAlerts();
    expect(attempts.map((a) => a.answeredStatus)).toEqual([503, 204]);
    expect(new Set(attempts.map((a) => a.headers["webhook-id"])).size).toBe(1);
    expect(attempts.map((a) => verifiedAlert(a).type)).toEqual(["client.circuit_open", "client.circuit_open"]);
    expect((await alertJobs())[0]).toMatchObject({ state: "completed" });
  });

  it("on a host without a worker, /api/cron/alerts delivers them, for the scheduler holding CRON_SECRET only", async () => {
    const { installRowId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"], { OAUTH_CLIENT_SECRET: "not-the-registered-secret" }));
    const cron = (authorization?: string) => fetch(`${stack.appUrl}/api/cron/alerts`, { method: "POST", headers: authorization ? { Authorization: authorization } : {} });
    expect((await cron()).status).toBe(401);
    expect((await cron("Bearer not-the-cron-secret")).status).toBe(401);
    expect(await receivedAlerts()).toEqual([]);
    const response = await cron(`Bearer ${process.env.CRON_SECRET}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ delivered: 1, failed: 0, more: false });
    expect((await receivedAlerts()).map((alert) => verifiedAlert(alert).type)).toEqual(["client.circuit_open"]);
  });

  it("ALERT_WEBHOOK_FORMAT=slack: a Slack incoming webhook's {text}, the summary and the console link, still signed", async () => {
    const { installRowId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"], { OAUTH_CLIENT_SECRET: "not-the-registered-secret" }));
    expect(resultOf<DeliverySummary>(await runAppWorker(["deliver-alerts"], { ALERT_WEBHOOK_FORMAT: "slack" }))).toMatchObject({ delivered: 1 });
    const [received] = await receivedAlerts();
    expect(received!.signature).toBe("valid");
    const body = JSON.parse(received!.body) as Record<string, string>;
    expect(Object.keys(body)).toEqual(["text"]);
    expect(body.text).toMatch(/^:rotating_light: The identity provider refuses the app's client credentials \(invalid_client, client /);
    expect(body.text).toContain(`<${stack.appUrl}/admin|Open in the console>`);
  });

  it("with ALERT_WEBHOOK_URL unset, alerts are off: a log line each, nothing queued or sent", async () => {
    const { installRowId } = await installViaPortal(1001);
    await expireAccessToken(installRowId, false);
    const run = await runAppWorker(["call", installRowId, "1"], { OAUTH_CLIENT_SECRET: "not-the-registered-secret", ALERT_WEBHOOK_URL: undefined, ALERT_WEBHOOK_SECRET: undefined });
    expect(resultOf<CallSummary>(run).errors).toEqual({ TokenCircuitOpenError: 1 });
    expect(run.stdout).toContain("alert (not sent: ALERT_WEBHOOK_URL is unset): The identity provider refuses the app's client credentials");
    expect(await alertJobs()).toEqual([]);
    expect(await receivedAlerts()).toEqual([]);
  });

  it("is dead-lettered after its retries, where staff find it", async () => {
    const [queue] = await sql<{ retry_limit: number; retry_backoff: boolean; dead_letter: string; expire_seconds: number }>(
      "SELECT retry_limit, retry_backoff, dead_letter, expire_seconds FROM pgboss.queue WHERE name = 'alert.deliver'",
    );
    expect(queue).toMatchObject({ retry_limit: 8, retry_backoff: true, dead_letter: "alert.deliver.dead-letter" });
    const { installRowId } = await installViaPortal(1001);
    await setAlertSinkOutage(2);
    await expireAccessToken(installRowId, false);
    resultOf<CallSummary>(await runAppWorker(["call", installRowId, "1"], { OAUTH_CLIENT_SECRET: "not-the-registered-secret" }));
    // The last retry: one more failure sends it to the dead letters.
    await sql("UPDATE pgboss.job SET retry_limit = 1 WHERE name = 'alert.deliver'");
    expect(await deliverAlerts()).toMatchObject({ failed: 1 });
    await sql("UPDATE pgboss.job SET start_after = now() WHERE name = 'alert.deliver'");
    expect(await deliverAlerts()).toMatchObject({ failed: 1 });
    const dead = await sql<{ name: string; data: { alert: { type: string } } }>("SELECT name, data FROM pgboss.job WHERE name = 'alert.deliver.dead-letter'");
    expect(dead.map((row) => [row.name, row.data.alert.type])).toEqual([["alert.deliver.dead-letter", "client.circuit_open"]]);
  });
});
