// POST /_sandbox/reauth-url-origin: NEEDS_REAUTH answers can name a reauth_url at another origin, so the app can be
// tested against a spoofed or compromised answer (it must not send the operator there). Reset puts it back.
import { beforeEach, describe, expect, it } from "vitest";
import { callApi, control, controlRaw, installAndRedeem, resetSandbox, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

type InstallView = { install_id: number; reauth_url: string | null };

async function flaggedInstall(): Promise<{ installId: number; accessToken: string }> {
  const tokens = await installAndRedeem(env, 1001);
  const [install] = (await control<{ installs: InstallView[] }>(env, "GET", "/installs")).installs;
  await control(env, "POST", `/installs/${install!.install_id}/flag-reauth`);
  return { installId: install!.install_id, accessToken: tokens.access_token };
}

async function reauthUrlInAnswer(accessToken: string): Promise<string> {
  const response = await callApi(env, "/charge-points", accessToken);
  expect(response.status).toBe(403);
  const body = (await response.json()) as { errorCode: string; context: { reauth_url: string } };
  expect(body.errorCode).toBe("NEEDS_REAUTH");
  return body.context.reauth_url;
}

describe("the reauth_url origin switch", () => {
  it("is the sandbox's own origin by default", async () => {
    expect(await control(env, "GET", "/reauth-url-origin")).toEqual({ origin: null });
    const { installId, accessToken } = await flaggedInstall();
    expect(await reauthUrlInAnswer(accessToken)).toBe(`${env.url}/portal/reauth/${installId}`);
  });

  it("points NEEDS_REAUTH answers (and the control view) at another origin, until reset", async () => {
    expect(await control(env, "POST", "/reauth-url-origin", { origin: "https://Reauth.Attacker.example/" })).toEqual({
      origin: "https://reauth.attacker.example",
    });
    const { installId, accessToken } = await flaggedInstall();
    const expected = `https://reauth.attacker.example/portal/reauth/${installId}`;
    expect(await reauthUrlInAnswer(accessToken)).toBe(expected);
    expect((await control<{ installs: InstallView[] }>(env, "GET", "/installs")).installs[0]!.reauth_url).toBe(expected);

    await control(env, "POST", "/reauth-url-origin", { origin: null });
    expect(await reauthUrlInAnswer(accessToken)).toBe(`${env.url}/portal/reauth/${installId}`);

    await control(env, "POST", "/reauth-url-origin", { origin: "https://reauth.attacker.example" });
    await resetSandbox(env);
    expect(await control(env, "GET", "/reauth-url-origin")).toEqual({ origin: null });
  });

  it("takes an origin only", async () => {
    for (const body of [{ origin: "https://x.example/path" }, { origin: "https://x.example?q=1" }, { origin: "ftp://x.example" }, { origin: "x" }, {}, { origin: null, extra: 1 }]) {
      expect((await controlRaw(env, "POST", "/reauth-url-origin", body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});
