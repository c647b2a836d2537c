// The service's wall clock off real time (sandbox README decision 60): every answer's Date header and every
// webhook's signed delivered_at follow it, so an app can be tested against a clock that disagrees with its own.
import { beforeEach, describe, expect, it } from "vitest";
import { advanceClock, connectAndApprove, control, controlRaw, resetSandbox, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env, { webhooks: true }));

/** How far a Date header is from this machine's clock, in whole seconds (the header has no finer resolution). */
const secondsOff = (response: Response) => Math.round((Date.parse(response.headers.get("date") ?? "") - Date.now()) / 1000);

describe("the wall-clock skew", () => {
  it("is 0 unless asked: Date headers are real time, whatever the expiry clock's offset", async () => {
    await advanceClock(env, 3600);
    for (const path of ["/idp/.well-known/openid-configuration", "/api/v1/consumers/me", "/portal", "/_sandbox/health"]) {
      expect(Math.abs(secondsOff(await fetch(`${env.url}${path}`))), path).toBeLessThanOrEqual(1);
    }
  });

  it("moves the Date header of every answer (identity provider, API, portal, control) and webhooks' delivered_at; reset puts it back", async () => {
    expect(await control(env, "POST", "/wall-clock", { seconds: 600 })).toEqual({ now: expect.any(String), skewSeconds: 600 });
    for (const path of ["/idp/.well-known/openid-configuration", "/api/v1/consumers/me", "/portal", "/_sandbox/health"]) {
      expect(secondsOff(await fetch(`${env.url}${path}`)), path).toBeGreaterThanOrEqual(599);
      expect(secondsOff(await fetch(`${env.url}${path}`)), path).toBeLessThanOrEqual(601);
    }
    await connectAndApprove(env, 1001);
    const body = JSON.parse(env.webhooks.received[0]!.rawBody.toString("utf8")) as { delivered_at: number };
    expect(body.delivered_at - Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(599);
    expect(body.delivered_at - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(601);

    await control(env, "POST", "/wall-clock", { seconds: -90 });
    expect(secondsOff(await fetch(`${env.url}/_sandbox/health`))).toBeGreaterThanOrEqual(-91);
    await control(env, "POST", "/reset");
    expect(await control(env, "GET", "/wall-clock")).toEqual({ now: expect.any(String), skewSeconds: 0 });
    expect(Math.abs(secondsOff(await fetch(`${env.url}/_sandbox/health`)))).toBeLessThanOrEqual(1);
  });

  it("refuses what is not whole seconds within a year", async () => {
    for (const body of [{ seconds: 1.5 }, { seconds: 400 * 24 * 3600 }, { seconds: "600" }, {}, { seconds: 1, extra: true }]) {
      expect((await controlRaw(env, "POST", "/wall-clock", body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});
