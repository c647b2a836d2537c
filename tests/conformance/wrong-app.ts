// A small partner app written only to be judged by the conformance run (conformance/): the partner side of the
// contract in one node:http server, with one switch per way of getting it wrong. With no switch on it keeps every
// obligation, so each check's test can show PASS against it and FAIL, with the right evidence, with one switch on.
// It is deliberately not this template's app: the run must judge any app by its addresses alone.
//
// It is a test device, not an example to copy: it keeps everything in memory, trusts its own cookie blindly and
// handles one app registration. Its clock can be moved (POST /_test/clock) as the sandbox's can, for keep-alive.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One way of breaking an obligation each (the check that must catch it is named after the dash). */
export const WRONGNESSES = [
  "redeem-late", // install.redeem: redeems the code after answering the redirect (a background task)
  "pkce", // install.redeem: sends a code_verifier
  "basic-auth", // install.redeem: client_secret_basic instead of client_secret_post
  "other-redirect-uri", // install.redeem: a redirect_uri that differs from the authorization request's
  "builds-authorization-url", // install.no-authorization: a connect link to the authorization endpoint
  "redeems-reused-callback", // install.reused-callback: a reload redeems the code again
  "calls-on-deny", // install.declined: tries a token request on error=access_denied
  "refresh-per-page", // tokens.single-refresh: every page that meets a 401 refreshes by itself
  "refresh-every-page", // tokens.single-refresh: refreshes before every API call, expired or not
  "keeps-old-refresh-token", // tokens.rotation: does not store the rotated refresh token
  "retries-refused-refresh", // tokens.refused-refresh: a refused refresh is tried again on every page
  "ignores-invalid-client", // tokens.invalid-client: goes on sending token requests
  "no-keep-alive", // tokens.keep-alive: its keep-alive run does nothing
  "unsigned-webhooks", // webhooks.forged, webhooks.unsigned: processes deliveries without checking the signature
  "verifies-after-acting", // webhooks.forged: acts on a delivery, then checks its signature and answers 401
  "no-freshness-check", // webhooks.stale, webhooks.future-dated: ignores delivered_at
  "no-size-limit", // webhooks.oversize: reads and processes a body of any size
  "replay-revokes-by-operator", // webhooks.replayed: no delivery-id check, and revokes the operator's install whatever its id
  "slow-webhooks", // webhooks.genuine-revoked, webhooks.deadline: answers install.revoked after the 10 s deadline
  "calls-while-flagged", // reauth.stop-and-resume: goes on calling the API after NEEDS_REAUTH
  "no-budget", // rate.burst: no request budget of its own
  "ignores-resets-in", // rate.resets-in: calls again at once after a 429
  "uses-revoked-tokens", // uninstall.reinstall: keeps calling with the revoked install's tokens
] as const;
export type Wrongness = (typeof WRONGNESSES)[number];

export interface WrongAppSettings {
  sandboxUrl: string;
  clientId: string;
  clientSecret: string;
  webhookSecret: string;
  cronSecret: string;
}

interface Install {
  installId: number;
  operatorId: number;
  accessToken: string | null;
  refreshToken: string | null;
  accessExpiresAt: number;
  refreshExpiresAt: number;
  status: "active" | "needs_reauth" | "revoked" | "dead";
  reauthUrl: string | null;
  reauthRequested: boolean;
  budget: { limit: number; windowMs: number };
  sent: number[];
  blockedUntil: number;
  refreshing?: Promise<void>;
}

const DAY_MS = 86_400_000;
const WEBHOOK_TOLERANCE_S = 300;
const WEBHOOK_MAX_BYTES = 64 * 1024;
const SLOW_WEBHOOK_MS = 10_500;

export class WrongApp {
  readonly wrong = new Set<Wrongness>();
  private server: Server | undefined;
  private settings: WrongAppSettings | undefined;
  private installs = new Map<number, Install>();
  private sessions = new Map<string, number>();
  private redeemedCodes = new Set<string>();
  private seenDeliveries = new Set<string>();
  private tokenRequestsPaused = false;
  private clockOffsetMs = 0;
  /** Bumped by reset(): a request still waiting from an earlier test (a slow webhook, a late redemption) changes nothing. */
  private generation = 0;
  url = "";

  /** Listens first (the sandbox needs the redirect_uri), configured after (the app needs the sandbox's address). */
  async listen(): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://localhost:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  configure(settings: WrongAppSettings): void {
    this.settings = settings;
  }

  /** Back to a fresh app that keeps every obligation, except the given ones. */
  reset(...wrong: Wrongness[]): void {
    this.wrong.clear();
    for (const w of wrong) this.wrong.add(w);
    this.installs.clear();
    this.sessions.clear();
    this.redeemedCodes.clear();
    this.seenDeliveries.clear();
    this.tokenRequestsPaused = false;
    this.clockOffsetMs = 0;
    this.generation++;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  get redirectUri(): string {
    return `${this.url}/oauth/callback`;
  }

  get webhookUrl(): string {
    return `${this.url}/api/webhooks`;
  }

  private now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  private get s(): WrongAppSettings {
    if (!this.settings) throw new Error("the wrong app is not configured");
    return this.settings;
  }

  // ----- HTTP ------------------------------------------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "Content-Type": "text/html", ...headers });
      res.end(body);
    };
    if (req.method === "GET" && url.pathname === "/oauth/callback") return this.callback(url, send);
    if (req.method === "GET" && url.pathname === "/dashboard") return send(200, await this.page(this.sessionOf(req)));
    if (req.method === "POST" && url.pathname === "/reauth") {
      const install = this.installs.get(this.sessionOf(req) ?? -1);
      if (!install?.reauthUrl) return send(303, "", { Location: "/dashboard" });
      install.reauthRequested = true;
      return send(303, "", { Location: install.reauthUrl });
    }
    if (req.method === "POST" && url.pathname === "/api/webhooks") {
      const answer = await this.webhook(req);
      return send(answer.status, answer.body);
    }
    if (req.method === "POST" && url.pathname.startsWith("/cron/")) {
      if (req.headers.authorization !== `Bearer ${this.s.cronSecret}`) return send(401, "");
      return send(200, JSON.stringify(url.pathname === "/cron/keep-alive" ? await this.keepAlive() : await this.sync()));
    }
    if (req.method === "POST" && url.pathname === "/_test/clock") {
      const { seconds } = JSON.parse((await readAll(req)) ?? "{}") as { seconds: number };
      this.clockOffsetMs += seconds * 1000;
      return send(204, "");
    }
    send(404, "not found");
  }

  private sessionOf(req: IncomingMessage): number | undefined {
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? "")?.[1];
    return sid ? this.sessions.get(sid) : undefined;
  }

  private async callback(url: URL, send: (status: number, body: string, headers?: Record<string, string>) => void): Promise<void> {
    const code = url.searchParams.get("code");
    if (!code) {
      if (this.wrong.has("calls-on-deny")) await this.tokenRequest({ grant_type: "authorization_code", code: "" });
      return send(200, this.notConnected());
    }
    // A reload of the same URL: the code was spent; sending it again would make the service revoke the tokens (§3).
    if (this.redeemedCodes.has(code) && !this.wrong.has("redeems-reused-callback")) return send(303, "", { Location: "/dashboard" });
    this.redeemedCodes.add(code);
    const sid = randomBytes(16).toString("hex");
    const headers = { Location: "/dashboard", "Set-Cookie": `sid=${sid}; Path=/; HttpOnly` };
    if (this.wrong.has("redeem-late")) {
      send(303, "", headers);
      const generation = this.generation;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      if (generation === this.generation) await this.redeem(code, sid);
      return;
    }
    const installId = await this.redeem(code, sid);
    return installId === null ? send(200, "<p>Could not connect.</p>") : send(303, "", headers);
  }

  private async redeem(code: string, sid: string): Promise<number | null> {
    const form: Record<string, string> = {
      grant_type: "authorization_code",
      code,
      redirect_uri: this.wrong.has("other-redirect-uri") ? `${this.redirectUri}?from=elsewhere` : this.redirectUri,
    };
    if (this.wrong.has("pkce")) form.code_verifier = randomBytes(32).toString("base64url");
    const answer = await this.tokenRequest(form);
    if (!answer || answer.status !== 200) return null;
    const tokens = answer.body as { access_token: string; refresh_token: string; expires_in: number };
    const me = await fetch(`${this.s.sandboxUrl}/api/v1/consumers/me`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    const body = (await me.json()) as { installId: number; operatorId: number; rateLimit: number; rateLimitIntervalInSeconds: number };
    this.installs.set(body.installId, {
      installId: body.installId,
      operatorId: body.operatorId,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
      accessExpiresAt: this.now() + tokens.expires_in * 1000,
      refreshExpiresAt: this.now() + 30 * DAY_MS,
      status: "active",
      reauthUrl: null,
      reauthRequested: false,
      budget: { limit: body.rateLimit, windowMs: body.rateLimitIntervalInSeconds * 1000 },
      sent: [this.now()],
      blockedUntil: 0,
    });
    this.sessions.set(sid, body.installId);
    return body.installId;
  }

  private async tokenRequest(fields: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> } | null> {
    if (this.tokenRequestsPaused && !this.wrong.has("ignores-invalid-client")) return null;
    const basic = this.wrong.has("basic-auth");
    const form = new URLSearchParams({ ...fields, ...(basic ? {} : { client_id: this.s.clientId, client_secret: this.s.clientSecret }) });
    const response = await fetch(`${this.s.sandboxUrl}/idp/oauth2/token`, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        ...(basic ? { Authorization: `Basic ${Buffer.from(`${this.s.clientId}:${this.s.clientSecret}`).toString("base64")}` } : {}),
      },
      body: form.toString(),
    });
    const body = (await response.json()) as Record<string, unknown>;
    // contract §7: invalid_client will not pass by itself; stop until the configuration changes.
    if (body.error === "invalid_client") this.tokenRequestsPaused = true;
    return { status: response.status, body };
  }

  // ----- tokens ------------------------------------------------------------------------------------------------

  /** One refresh per install at a time (contract §3: the rotated token is single use); every caller waits for it. */
  private refresh(install: Install): Promise<void> {
    if (this.wrong.has("refresh-per-page")) return this.doRefresh(install);
    install.refreshing ??= this.doRefresh(install).finally(() => (install.refreshing = undefined));
    return install.refreshing;
  }

  private async doRefresh(install: Install): Promise<void> {
    if (install.status === "dead" && !this.wrong.has("retries-refused-refresh")) return;
    if (!install.refreshToken) return;
    const answer = await this.tokenRequest({ grant_type: "refresh_token", refresh_token: install.refreshToken });
    if (!answer) return;
    if (answer.status === 200) {
      const tokens = answer.body as { access_token: string; refresh_token: string; expires_in: number };
      install.accessToken = tokens.access_token;
      if (!this.wrong.has("keeps-old-refresh-token")) install.refreshToken = tokens.refresh_token;
      install.accessExpiresAt = this.now() + tokens.expires_in * 1000;
      install.refreshExpiresAt = this.now() + 30 * DAY_MS;
    } else if (answer.body.error === "invalid_grant") {
      // contract §7: the operator must re-install; trying again would change nothing.
      install.status = "dead";
    }
  }

  private async keepAlive(): Promise<{ refreshed: number }> {
    if (this.wrong.has("no-keep-alive")) return { refreshed: 0 };
    let refreshed = 0;
    for (const install of this.installs.values()) {
      if ((install.status === "active" || install.status === "needs_reauth") && install.refreshExpiresAt - this.now() < 7 * DAY_MS) {
        await this.refresh(install);
        refreshed++;
      }
    }
    return { refreshed };
  }

  private async sync(): Promise<{ synced: number }> {
    let synced = 0;
    for (const install of this.installs.values()) {
      if (install.status === "active" || this.wrong.has("calls-while-flagged") || (install.status === "revoked" && this.wrong.has("uses-revoked-tokens"))) {
        await this.callApi(install, "/consumers/me");
        synced++;
      }
    }
    return { synced };
  }

  // ----- the partner API ----------------------------------------------------------------------------------------

  /** One API call within the install's budget (contract §8); null when the budget or a 429 says wait. */
  private async callApi(install: Install, path: string, retried = false): Promise<{ status: number; body: Record<string, unknown> } | null> {
    const now = this.now();
    install.sent = install.sent.filter((t) => t > now - install.budget.windowMs);
    if (!this.wrong.has("no-budget") && install.sent.length >= install.budget.limit) return null;
    if (!this.wrong.has("ignores-resets-in") && now < install.blockedUntil) return null;
    if ((install.accessExpiresAt <= now || this.wrong.has("refresh-every-page")) && !retried) await this.refresh(install);
    install.sent.push(now);
    const used = install.accessToken;
    const response = await fetch(`${this.s.sandboxUrl}/api/v1${path}`, { headers: { Authorization: `Bearer ${used}` } });
    const body = (await response.json()) as Record<string, unknown>;
    if (response.status === 401 && !retried && install.status !== "revoked") {
      // Someone else may have refreshed meanwhile: refresh only if the token that failed is still the current one.
      if (install.accessToken === used) await this.refresh(install);
      return this.callApi(install, path, true);
    }
    if (response.status === 403 && body.errorCode === "NEEDS_REAUTH") {
      install.status = "needs_reauth";
      install.reauthUrl = String((body.context as { reauth_url?: string } | undefined)?.reauth_url ?? "");
    }
    if (response.status === 429) install.blockedUntil = this.now() + Number(response.headers.get("RateLimit-ResetsIn") ?? 1) * 1000;
    return { status: response.status, body };
  }

  private notConnected(): string {
    if (!this.wrong.has("builds-authorization-url")) return "<p>Not connected. Connect the app from your operator portal.</p>";
    const url = `${this.s.sandboxUrl}/idp/oauth2/auth?response_type=code&client_id=${this.s.clientId}&redirect_uri=${encodeURIComponent(this.redirectUri)}&state=${randomBytes(8).toString("hex")}`;
    void fetch(url, { redirect: "manual" }).catch(() => undefined);
    return `<p>Not connected.</p><a href="${url.replaceAll("&", "&amp;")}">Connect</a>`;
  }

  private async page(installId: number | undefined): Promise<string> {
    const install = installId === undefined ? undefined : this.installs.get(installId);
    if (!install) return this.notConnected();
    if (install.status === "revoked" && !this.wrong.has("uses-revoked-tokens")) return "<p>The app was uninstalled.</p>";
    if (install.status === "dead" && !this.wrong.has("retries-refused-refresh")) return "<p>Please install the app again from your portal.</p>";
    if (install.status === "needs_reauth" && !this.wrong.has("calls-while-flagged")) {
      if (!install.reauthRequested) return this.banner();
      // The operator went to reauth_url through our form: one probe tells whether they approved.
      install.reauthRequested = false;
      const probe = await this.callApi(install, "/consumers/me");
      if (probe?.status !== 200) return this.banner();
      install.status = "active";
    }
    const answer = await this.callApi(install, "/charge-points");
    if (!answer) return "<p data-reason=\"busy\">Busy: try again shortly.</p>";
    if (install.status === "needs_reauth") return this.banner();
    return `<p data-status="${answer.status}">Charge points: ${(answer.body.data as unknown[] | undefined)?.length ?? 0}</p>`;
  }

  private banner(): string {
    return '<div role="status"><p>Please approve the app\'s new access.</p><form method="POST" action="/reauth"><button type="submit">Review and approve</button></form></div>';
  }

  // ----- webhooks (contract §6) ---------------------------------------------------------------------------------

  private async webhook(req: IncomingMessage): Promise<{ status: number; body: string }> {
    const limit = this.wrong.has("no-size-limit") ? Infinity : WEBHOOK_MAX_BYTES;
    const raw = await readAll(req, limit);
    if (raw === null) return { status: 413, body: "too large" };
    const expected = `sha256=${createHmac("sha256", this.s.webhookSecret).update(raw).digest("hex")}`;
    const given = String(req.headers["x-volt-signature"] ?? "");
    const digest = (value: string) => createHash("sha256").update(value).digest();
    const signed = this.wrong.has("unsigned-webhooks") || timingSafeEqual(digest(expected), digest(given));
    if (!signed && !this.wrong.has("verifies-after-acting")) return { status: 401, body: "bad signature" };
    const answer = await this.processDelivery(raw);
    return signed ? answer : { status: 401, body: "bad signature" };
  }

  private async processDelivery(raw: string): Promise<{ status: number; body: string }> {
    const envelope = JSON.parse(raw) as { id: string; type: string; delivered_at: number; data: { install_id: number; operator_id: number } };
    if (!this.wrong.has("no-freshness-check") && Math.abs(Date.now() / 1000 - envelope.delivered_at) > WEBHOOK_TOLERANCE_S) return { status: 400, body: "stale" };
    const byOperator = this.wrong.has("replay-revokes-by-operator");
    if (!byOperator && this.seenDeliveries.has(envelope.id)) return { status: 200, body: "already processed" };
    this.seenDeliveries.add(envelope.id);
    if (envelope.type === "install.revoked") {
      const generation = this.generation;
      if (this.wrong.has("slow-webhooks")) await new Promise((resolve) => setTimeout(resolve, SLOW_WEBHOOK_MS));
      if (generation !== this.generation) return { status: 200, body: "ok" };
      for (const install of this.installs.values()) {
        if (byOperator ? install.operatorId === envelope.data.operator_id : install.installId === envelope.data.install_id) {
          install.status = "revoked";
          // contract §6: the app stops using tokens for that install.
          if (!this.wrong.has("uses-revoked-tokens")) install.accessToken = install.refreshToken = null;
        }
      }
    }
    return { status: 200, body: "ok" };
  }
}

/** The whole body, or null past `limit` bytes. */
function readAll(req: IncomingMessage, limit = Infinity): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(over ? null : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
