// The app's clock against the service's (issue 34; lib/partner-api/service-clock.ts): every answer of the API and of the
// identity provider carries a Date header (RFC 9110 §6.6.1), so the app knows how far apart the two clocks are. When
// they near the window webhooks are checked against (WEBHOOK_TOLERANCE_SECONDS, contract §6.4, spec-gap A6), /api/ready
// says so in `details.clock` and one staff alert fires; it resolves when the clocks agree again. The sandbox plays a
// service whose wall clock is off (POST /_sandbox/wall-clock, sandbox README decision 60), which is what an app
// whose own clock is off sees.
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { resultOf, runAppWorker } from "../helpers/app-process";
import { closeSql, control, installViaPortal, receivedAlerts, resetWorld, sql, stack } from "../helpers/stack";

beforeEach(resetWorld);
afterAll(async () => {
  await control("POST", "/wall-clock", { seconds: 0 });
  await closeSql();
});

type ClockDetails = { skewSeconds: number | null; source: string | null; measuredAt: string | null; warning?: string };
const readyClock = async (): Promise<ClockDetails> => ((await (await fetch(`${stack.appUrl}/api/ready`)).json()) as { details: { clock: ClockDetails } }).details.clock;

type AlertJob = { data: { alert: { type: string; incident: string; details: Record<string, unknown> } } };
/** The clock alerts queued, waiting a little: an alert is raised beside the call that measured, not inside it. */
async function clockAlertJobs(count: number): Promise<AlertJob["data"]["alert"][]> {
  let jobs: AlertJob[] = [];
  for (let i = 0; i < 50; i++) {
    jobs = await sql<AlertJob>("SELECT data FROM pgboss.job WHERE name = 'alert.deliver' AND data->'alert'->>'type' LIKE 'clock.%' ORDER BY created_on");
    if (jobs.length >= count) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return jobs.map((job) => job.data.alert);
}

const deliverAlerts = async () => resultOf<{ delivered: number }>(await runAppWorker(["deliver-alerts"]));

describe("a clock 10 minutes off the service's", () => {
  it("webhooks are refused as stale; /api/ready says how far off and warns; one clock.skewed alert, and clock.recovered once the clocks agree", async () => {
    await control("POST", "/wall-clock", { seconds: 600 });
    // The install itself: the token endpoint and GET /consumers/me both answer with the service's Date.
    const install = await installViaPortal(1001);

    // Correctly refused (contract §6.4): delivered_at is 600 s ahead of the app's clock.
    const crafted = await control<{ attempts: { status: number }[] }>("POST", "/webhooks/craft", {
      type: "install.config.updated",
      data: { install_id: install.installId, operator_id: 1001, config: {} },
    });
    expect(crafted.attempts[0]!.status).toBe(400);

    const skewed = await readyClock();
    expect(skewed).toMatchObject({ skewSeconds: expect.any(Number), source: "api", warning: expect.stringContaining("WEBHOOK_TOLERANCE_SECONDS") });
    // The service's clock is ahead, so the app's is behind: positive.
    expect(skewed.skewSeconds).toBeGreaterThanOrEqual(599);
    expect(skewed.skewSeconds).toBeLessThanOrEqual(601);
    expect(Math.abs(Date.now() - Date.parse(skewed.measuredAt!))).toBeLessThan(30_000);

    // One alert, however many answers say it (another install: its token request and its first API call).
    await installViaPortal(1002);
    const [alert, ...more] = await clockAlertJobs(1);
    expect(more).toEqual([]);
    expect(alert).toMatchObject({ type: "clock.skewed", incident: expect.stringMatching(/^clock:/), details: { skewSeconds: expect.any(Number), toleranceSeconds: 300 } });
    expect(await deliverAlerts()).toMatchObject({ delivered: 1 });
    const [received] = await receivedAlerts();
    expect(JSON.parse(received!.body)).toMatchObject({ type: "clock.skewed", status: "firing", install: null, summary: expect.stringMatching(/behind the service's/) });

    // The clocks agree again: the next answer says so, and the incident resolves once.
    await control("POST", "/wall-clock", { seconds: 0 });
    await installViaPortal(1003);
    const agreed = await readyClock();
    expect(Math.abs(agreed.skewSeconds!)).toBeLessThanOrEqual(1);
    expect(agreed.warning).toBeUndefined();
    const alerts = await clockAlertJobs(2);
    expect(alerts.map((a) => a.type)).toEqual(["clock.skewed", "clock.recovered"]);
    expect(alerts[1]!.incident).toBe(alert!.incident);
  });

  it("the identity provider's answers count too, a refused token request among them; a skew well inside the window warns nobody", async () => {
    const { readServiceClock } = await import("@/lib/partner-api/service-clock");
    const { redeemAuthorizationCode } = await import("@/lib/oauth/token-endpoint");
    await control("POST", "/wall-clock", { seconds: 60 });
    await expect(redeemAuthorizationCode(new URLSearchParams({ code: "volt_ac_not-a-code", iss: process.env.OAUTH_ISSUER! }))).rejects.toMatchObject({ kind: "invalid_grant" });
    const reading = readServiceClock();
    expect(reading).toMatchObject({ source: "identity-provider" });
    expect(Math.abs(reading.skewSeconds! - 60)).toBeLessThanOrEqual(1);
    expect(reading.warning).toBeUndefined();

    await control("POST", "/wall-clock", { seconds: -400 });
    await expect(redeemAuthorizationCode(new URLSearchParams({ code: "volt_ac_not-a-code", iss: process.env.OAUTH_ISSUER! }))).rejects.toMatchObject({ kind: "invalid_grant" });
    expect(Math.abs(readServiceClock().skewSeconds! + 400)).toBeLessThanOrEqual(1);
    expect(readServiceClock().warning).toMatch(/ahead of the service's/);
    expect((await clockAlertJobs(1)).map((a) => a.type)).toEqual(["clock.skewed"]);
  });
});
