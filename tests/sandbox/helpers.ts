// Test harness for the sandbox conformance tests: an in-process sandbox on port 0 with a temp data dir,
// a fake webhook receiver that records raw bodies, and plain-fetch helpers that walk the portal → consent →
// callback flow by following redirects manually, as a browser would.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { SandboxConfig } from "../../sandbox/config.js";
import { startSandbox, type RunningSandbox } from "../../sandbox/server.js";

export const CLIENT_ID = "test-partner-app";
export const CLIENT_SECRET = "test-client-secret-0123456789";
export const WEBHOOK_SECRET = "whsec_test_0123456789";
export const REDIRECT_URI = "http://localhost:3999/oauth/callback";
export const REQUESTED_SCOPES = ["charge-points:read", "charge-transactions:read"];

/** The least environment `loadConfig` accepts: for tests of one sandbox setting read from the environment. */
export const MINIMAL_SANDBOX_ENV: NodeJS.ProcessEnv = {
  NODE_ENV: "test",
  OAUTH_CLIENT_ID: "c",
  OAUTH_CLIENT_SECRET: "s",
  OAUTH_REDIRECT_URI: "http://localhost:3000/oauth/callback",
  WEBHOOK_SECRET: "w",
  WEBHOOK_URL: "http://localhost:3000/api/webhooks",
  APP_REQUESTED_SCOPES: "charge-points:read",
};

export interface RecordedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
}

export interface WebhookReceiver {
  url: string;
  received: RecordedWebhook[];
  /** What the next deliveries get answered with. */
  respondWith: {
    status: number;
    delayMs: number;
    /** Reset a kept-alive connection when it is used again, unanswered, as an idle timeout that races its reuse does. */
    resetReused: boolean;
  };
  close(): Promise<void>;
}

/** How the fake receiver answers until a test says otherwise: 204 at once. */
const DEFAULT_RESPONSE = { status: 204, delayMs: 0, resetReused: false } as const;

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: RecordedWebhook[] = [];
  const respondWith: WebhookReceiver["respondWith"] = { ...DEFAULT_RESPONSE };
  const served = new WeakSet<object>();
  const server: Server = createServer((req, res) => {
    if (respondWith.resetReused && served.has(req.socket)) return void req.socket.destroy();
    served.add(req.socket);
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, rawBody: Buffer.concat(chunks) });
      setTimeout(() => {
        res.statusCode = respondWith.status;
        res.end();
      }, respondWith.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}/api/webhooks`,
    received,
    respondWith,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TestEnv {
  url: string;
  config: SandboxConfig;
  webhooks: WebhookReceiver;
  running: RunningSandbox;
  /** Every line the sandbox logged (its stdout in production), to check that no secret ever reaches it. */
  logs: string[];
  /** Closes the sandbox (flushing state) and starts a new one on the same data dir. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export type SandboxOverrides = Partial<Pick<SandboxConfig, "refreshDelayMs" | "rateLimit" | "operatorCount" | "chargesPerOperator" | "liveData" | "alertSecret">> & { webhookTimeoutMs?: number; reauthReturnUrl?: string };

export async function startTestSandbox(overrides: SandboxOverrides = {}): Promise<TestEnv> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "volt-sandbox-test-"));
  const webhooks = await startWebhookReceiver();
  const config: SandboxConfig = {
    port: 0,
    dataDir,
    client: {
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: REDIRECT_URI,
      requestedScopes: REQUESTED_SCOPES,
      appName: "Test Partner App",
      reauthReturnUrl: overrides.reauthReturnUrl,
    },
    webhook: { url: webhooks.url, secret: WEBHOOK_SECRET, timeoutMs: overrides.webhookTimeoutMs ?? 10_000 },
    refreshDelayMs: overrides.refreshDelayMs ?? 0,
    rateLimit: overrides.rateLimit ?? { limit: 1000, windowSeconds: 60 },
    operatorCount: overrides.operatorCount,
    chargesPerOperator: overrides.chargesPerOperator,
    liveData: overrides.liveData,
    alertSecret: overrides.alertSecret,
  };
  const logs: string[] = [];
  const quiet = (line: string): void => {
    logs.push(line);
  };
  const env: TestEnv = {
    url: "",
    config,
    webhooks,
    logs,
    running: await startSandbox(config, { log: quiet }),
    async restart() {
      await env.running.close();
      env.running = await startSandbox(config, { log: quiet });
      env.url = env.running.url;
    },
    async close() {
      await env.running.close();
      await webhooks.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  env.url = env.running.url;
  return env;
}

/**
 * Registers the vitest hooks that start a test sandbox and close it after, in the file or `describe` block it is called
 * in: one sandbox for the whole block, or with `{ per: "test" }` a fresh one for every test. Returns a TestEnv that
 * reads through to the sandbox the hooks started, so tests use it like one from startTestSandbox (only inside hooks
 * and tests: before the sandbox has started, it throws).
 */
export function setUpTestSandbox(overrides: SandboxOverrides = {}, options: { per?: "block" | "test" } = {}): TestEnv {
  let current: TestEnv | undefined;
  const [before, after] = options.per === "test" ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    current = await startTestSandbox(overrides);
  });
  after(async () => {
    await current?.close();
    current = undefined;
  });
  const env = (): TestEnv => {
    if (!current) throw new Error("the test sandbox is not running: use it inside a hook or a test");
    return current;
  };
  return {
    get url() {
      return env().url;
    },
    get config() {
      return env().config;
    },
    get webhooks() {
      return env().webhooks;
    },
    get running() {
      return env().running;
    },
    get logs() {
      return env().logs;
    },
    restart: () => env().restart(),
    close: () => env().close(),
  };
}

/**
 * Puts a shared sandbox back to its start for the next test: POST /_sandbox/reset, and with `{ webhooks: true }` also
 * empties the fake receiver and makes it answer 204 at once again.
 */
export async function resetSandbox(env: TestEnv, options: { webhooks?: boolean } = {}): Promise<void> {
  await control(env, "POST", "/reset");
  if (options.webhooks) {
    env.webhooks.received.length = 0;
    Object.assign(env.webhooks.respondWith, DEFAULT_RESPONSE);
  }
}

export function locationOf(response: Response): string {
  const location = response.headers.get("location");
  if (!location) throw new Error(`expected a redirect, got ${response.status}`);
  return location;
}

/** The consent_challenge hidden input of a consent page. */
export function challengeFrom(html: string): string {
  const match = /name="consent_challenge" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error("no consent_challenge in page");
  return match[1];
}

export function scopeItemsFrom(html: string): string[] {
  const list = /<ul class="scopes"[^>]*>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? "";
  return [...list.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1] ?? "");
}

export async function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
}

/** Portal → Connect → authorization endpoint → consent page. Returns the page and its challenge. */
export async function openConsent(env: TestEnv, operatorId: number): Promise<{ html: string; challenge: string; authorizeUrl: string }> {
  const connect = await postForm(`${env.url}/portal/operators/${operatorId}/connect`, {});
  const authorizeUrl = locationOf(connect);
  const authorize = await fetch(authorizeUrl, { redirect: "manual" });
  const consentUrl = locationOf(authorize);
  const page = await fetch(consentUrl);
  const html = await page.text();
  return { html, challenge: challengeFrom(html), authorizeUrl };
}

export interface Callback {
  url: URL;
  code: string;
  scope: string;
  state: string;
}

/** The whole operator side of the flow, ending at the app's redirect_uri with a code. */
export async function connectAndApprove(env: TestEnv, operatorId: number): Promise<Callback> {
  const { challenge } = await openConsent(env, operatorId);
  const decision = await postForm(`${env.url}/idp/consent`, { consent_challenge: challenge, decision: "approve" });
  const url = new URL(locationOf(decision));
  return {
    url,
    code: url.searchParams.get("code") ?? "",
    scope: url.searchParams.get("scope") ?? "",
    state: url.searchParams.get("state") ?? "",
  };
}

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

export function redeemCode(env: TestEnv, code: string, fields: Record<string, string> = {}): Promise<Response> {
  return postForm(`${env.url}/idp/oauth2/token`, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    ...fields,
  });
}

export function refreshTokens(env: TestEnv, refreshToken: string): Promise<Response> {
  return postForm(`${env.url}/idp/oauth2/token`, {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
}

/** Connect, approve and redeem: a fresh install with its first token set. */
export async function installAndRedeem(env: TestEnv, operatorId: number): Promise<TokenSet> {
  const callback = await connectAndApprove(env, operatorId);
  const response = await redeemCode(env, callback.code);
  if (response.status !== 200) throw new Error(`redeem failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as TokenSet;
}

export function callApi(env: TestEnv, pathAndQuery: string, accessToken: string): Promise<Response> {
  return fetch(`${env.url}/api/v1${pathAndQuery}`, { headers: { Authorization: `Bearer ${accessToken}` } });
}

/** A control API call without checking the status (for tests of the control API's own validation). */
export function controlRaw(env: TestEnv, method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", pathAndQuery: string, body?: unknown): Promise<Response> {
  return fetch(`${env.url}/_sandbox${pathAndQuery}`, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export async function control<T>(env: TestEnv, method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", pathAndQuery: string, body?: unknown): Promise<T> {
  const response = await controlRaw(env, method, pathAndQuery, body);
  if (!response.ok) throw new Error(`control ${method} ${pathAndQuery} → ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export interface TokenStats {
  install_id: number;
  calls: { authorization_code: number; refresh_token: number };
  refreshes_issued: number;
  chain_revocations: number;
  chain_revoked: boolean;
  chain_revoked_reason: string | null;
  active_access_tokens: number;
}

export function tokenStats(env: TestEnv, installId: number): Promise<TokenStats> {
  return control<TokenStats>(env, "GET", `/installs/${installId}/token-stats`);
}

export interface EventEntry {
  seq: number;
  at: string;
  type: string;
  detail: Record<string, unknown>;
}

export async function events(env: TestEnv, query = ""): Promise<EventEntry[]> {
  return (await control<{ events: EventEntry[] }>(env, "GET", `/events${query}`)).events;
}

/** The webhooks received so far, parsed (the raw bytes stay in env.webhooks.received). */
export function receivedEnvelopes(env: TestEnv): { id: string; type: string; delivered_at: number; data: Record<string, unknown> }[] {
  return env.webhooks.received.map((w) => JSON.parse(w.rawBody.toString("utf8")) as { id: string; type: string; delivered_at: number; data: Record<string, unknown> });
}

/** Waits until the fake receiver holds at least `count` deliveries (deliveries triggered by a control call are awaited, but be safe). */
export async function waitForWebhooks(env: TestEnv, count: number, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (env.webhooks.received.length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} webhooks, got ${env.webhooks.received.length}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function advanceClock(env: TestEnv, seconds: number): Promise<void> {
  await control(env, "POST", "/clock/advance", { seconds });
}
