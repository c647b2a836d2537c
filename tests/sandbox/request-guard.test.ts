// Who may talk to the sandbox (sandbox/request-guard.ts, config.ts listenHost): it listens on loopback only;
// it answers only to loopback names and its public host (DNS rebinding); and its control API refuses requests a
// browser sends on behalf of another web page, while tools (no Origin) and its own pages carry on.
import { request as httpRequest } from "node:http";
import net from "node:net";
import { networkInterfaces } from "node:os";
import { beforeEach, describe, expect, it } from "vitest";
import { control, controlRaw, postForm, resetSandbox, setUpTestSandbox } from "./helpers.js";

const env = setUpTestSandbox();
beforeEach(() => resetSandbox(env));

/** A control call as a browser would send it, with the headers it adds. */
function browserControl(headers: Record<string, string>, path = "/clock/advance", body: unknown = { seconds: 60 }): Promise<Response> {
  return fetch(`${env.url}/_sandbox${path}`, {
    method: "POST",
    headers: { "Content-Type": "text/plain", ...headers }, // text/plain: a "simple" request, sent without a CORS preflight
    body: JSON.stringify(body),
  });
}

async function clockOffset(): Promise<number> {
  return (await control<{ offsetSeconds: number }>(env, "GET", "/clock")).offsetSeconds;
}

/** A raw request with a Host header of our choosing (fetch does not let a caller set Host). */
function withHost(host: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(env.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname: url.hostname, port: url.port, path, headers: { Host: host } }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the control API and other web pages", () => {
  it("refuses a cross-origin request (Origin of another site, or the opaque 'null') before doing anything", async () => {
    for (const origin of ["https://attacker.example", "http://localhost:3999", "null"]) {
      const response = await browserControl({ Origin: origin });
      expect(response.status, origin).toBe(403);
      expect(await response.json()).toMatchObject({ error: "forbidden", reason: "origin", message: expect.stringContaining(origin) });
    }
    expect(await clockOffset()).toBe(0);
  });

  it("refuses a request whose Sec-Fetch-Site says another site made it, even without Origin", async () => {
    for (const site of ["cross-site", "same-site"]) {
      const response = await fetch(`${env.url}/_sandbox/installs`, { headers: { "Sec-Fetch-Site": site } });
      expect(response.status, site).toBe(403);
      expect(await response.json()).toMatchObject({ error: "forbidden", reason: "sec-fetch-site" });
    }
    expect((await browserControl({ "Sec-Fetch-Site": "cross-site" })).status).toBe(403);
    expect(await clockOffset()).toBe(0);
  });

  it("serves the sandbox's own pages (same origin), the address bar (Sec-Fetch-Site: none) and tools (no Origin)", async () => {
    expect((await browserControl({ Origin: env.url, "Sec-Fetch-Site": "same-origin" })).status).toBe(200);
    expect((await fetch(`${env.url}/_sandbox/clock`, { headers: { "Sec-Fetch-Site": "none" } })).status).toBe(200);
    expect((await controlRaw(env, "POST", "/clock/advance", { seconds: 60 })).status).toBe(200);
    expect(await clockOffset()).toBe(120);
    // The very origin the request was sent to counts as its own, however SANDBOX_URL spells it.
    const viaIp = env.url.replace("localhost", "127.0.0.1");
    const response = await fetch(`${viaIp}/_sandbox/clock`, { headers: { Origin: viaIp, "Sec-Fetch-Site": "same-origin" } });
    expect(response.status).toBe(200);
  });

  it("leaves the service's own pages alone: the console's same-origin form still works", async () => {
    const response = await postForm(`${env.url}/console/scopes`, { scopes: "charge-points:read" }, { Origin: env.url, "Sec-Fetch-Site": "same-origin" });
    expect(response.status).toBe(303);
    expect((await control<{ requested_scopes: string[] }>(env, "GET", "/app")).requested_scopes).toEqual(["charge-points:read"]);
  });
});

describe("DNS rebinding", () => {
  it("refuses a request for any host but loopback names and the public host, on every route", async () => {
    const { port } = new URL(env.url);
    for (const path of ["/_sandbox/installs", "/portal", "/idp/.well-known/openid-configuration"]) {
      const refused = await withHost(`attacker.example:${port}`, path);
      expect(refused.status, path).toBe(403);
      expect(JSON.parse(refused.body)).toMatchObject({ error: "forbidden", reason: "host" });
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, "LOCALHOST"]) {
      expect((await withHost(host, "/_sandbox/health")).status, host).toBe(200);
    }
  });
});

describe("where it listens", () => {
  it("on loopback only: not reachable at this machine's other addresses", async () => {
    const { port } = new URL(env.url);
    const external = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && !a.internal && !a.address.startsWith("fe80:"))
      .map((a) => a!.address);
    const connect = (host: string) =>
      new Promise<string>((resolve) => {
        const socket = net.connect({ host, port: Number(port), timeout: 2_000 });
        socket.on("connect", () => (socket.destroy(), resolve("connected")));
        socket.on("timeout", () => (socket.destroy(), resolve("timeout")));
        socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
      });
    expect(await connect("localhost")).toBe("connected");
    for (const address of external) expect(await connect(address), address).not.toBe("connected");
  });
});
