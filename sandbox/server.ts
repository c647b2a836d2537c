// Assembles the sandbox: one Hono app with the identity provider (/idp), operator portal (/portal),
// partner API (/api/v1) and control API (/_sandbox). createSandbox() is for in-process use (tests);
// startSandbox() also listens (port 0 picks a free port).
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { AlertSink, decodeAlertSecret } from "./alert-sink.js";
import { RateBudgets } from "./api/budget.js";
import { ApiRequestCounters } from "./api/counters.js";
import { ApiFaults } from "./api/faults.js";
import { apiRoutes } from "./api/routes.js";
import { SandboxClock } from "./clock.js";
import { isLoopbackHost, listenHost, type SandboxConfig } from "./config.js";
import { consoleRoutes } from "./console/routes.js";
import type { SandboxContext } from "./context.js";
import { controlRoutes } from "./control.js";
import { TokenEndpointFaults } from "./faults.js";
import { authorizeRoutes } from "./idp/authorize.js";
import { defaultIdpBehaviour } from "./idp/behaviour.js";
import { consentRoutes } from "./idp/consent.js";
import { discoveryRoutes } from "./idp/discovery.js";
import { tokenRoutes } from "./idp/token.js";
import { portalRoutes } from "./portal/routes.js";
import { controlOriginGuard, hostGuard } from "./request-guard.js";
import { OperatorDirectory } from "./operators.js";
import { SandboxStore } from "./store.js";
import { createWebhookSender } from "./webhooks.js";

export interface SandboxOptions {
  /** Where log lines go; defaults to stdout with a [sandbox] prefix. */
  log?: (line: string) => void;
}

export interface Sandbox {
  app: Hono;
  ctx: SandboxContext;
  /** Sets the public origin once it is known (port 0). */
  setPublicUrl(url: string): void;
  /** Writes pending state to disk. */
  flush(): Promise<void>;
  /** Writes pending state and folds the journal into a snapshot (shutdown). */
  close(): Promise<void>;
}

export async function createSandbox(config: SandboxConfig, options: SandboxOptions = {}): Promise<Sandbox> {
  const log = options.log ?? ((line: string) => console.log(`[sandbox] ${line}`));
  const store = await SandboxStore.open(config.dataDir, log);
  const clock = new SandboxClock(store.state.clockOffsetSeconds);
  const liveDefaults = config.liveData ?? { enabled: false, chargesPerHour: 2 };
  applyConfiguredLiveSetting(store, liveDefaults, clock.nowMs());
  let publicUrl = config.publicUrl ?? `http://localhost:${config.port}`;

  const ctx: SandboxContext = {
    config,
    clock,
    store,
    operators: new OperatorDirectory(config, () => store.state, clock, liveDefaults),
    webhooks: createWebhookSender(config, clock, store, log),
    publicUrl: () => publicUrl,
    issuer: () => `${publicUrl}/idp`,
    log,
    refreshesInFlight: new Set(),
    refreshesInFlightPeak: { value: 0 },
    faults: new TokenEndpointFaults(),
    rateBudgets: new RateBudgets(config.rateLimit),
    apiFaults: new ApiFaults(),
    apiRequests: new ApiRequestCounters(),
    consumerInstallId: { include: true },
    idpBehaviour: defaultIdpBehaviour(),
    reauthUrlOrigin: { value: null },
    alertSink: new AlertSink(config.alertSecret ? decodeAlertSecret(config.alertSecret) : null),
  };

  const app = new Hono();
  // Before any route: loopback names only (DNS rebinding), and no control request from another web page.
  app.use("*", hostGuard(ctx));
  app.use("/_sandbox/*", controlOriginGuard(ctx));
  // Every answer's Date header is the service's wall clock (RFC 9110 §6.6.1), skewed when a test asks (decision 60):
  // what a client compares its own clock with. Node would otherwise write the real time.
  app.use("*", async (c, next) => {
    await next();
    c.res.headers.set("Date", new Date(clock.wallNowMs()).toUTCString());
  });
  app.get("/", (c) => c.redirect("/portal", 302));
  const idp = new Hono();
  idp.route("/", discoveryRoutes(ctx));
  idp.route("/", authorizeRoutes(ctx));
  idp.route("/", consentRoutes(ctx));
  idp.route("/", tokenRoutes(ctx));
  app.route("/idp", idp);
  app.route("/portal", portalRoutes(ctx));
  app.route("/console", consoleRoutes(ctx));
  app.route("/api/v1", apiRoutes(ctx));
  app.route("/_sandbox", controlRoutes(ctx));

  app.onError((error, c) => {
    log(`unexpected error on ${c.req.method} ${new URL(c.req.url).pathname}: ${error.message}`);
    return c.json({ error: "server_error", error_description: "The sandbox hit an unexpected error; see its log." }, 500);
  });

  return {
    app,
    ctx,
    setPublicUrl(url: string) {
      publicUrl = url.replace(/\/+$/, "");
    },
    flush: () => store.flush(),
    close: () => store.close(),
  };
}

/**
 * The live-data setting at start (decision 43): the stored one (a control call may have changed it) as long as the
 * environment says what it said when it was stored, so a restart keeps the hour slots where they were (same clock
 * position, same data); a changed SANDBOX_LIVE_DATA / SANDBOX_LIVE_CHARGES_PER_HOUR applies, anchored now.
 */
function applyConfiguredLiveSetting(store: SandboxStore, configured: { enabled: boolean; chargesPerHour: number }, nowMs: number): void {
  const stored = store.state.live;
  if (stored?.configured && stored.configured.enabled === configured.enabled && stored.configured.chargesPerHour === configured.chargesPerHour) return;
  store.state.live = { ...configured, anchorMs: nowMs, configured: { ...configured } };
  store.changed();
}

export interface RunningSandbox {
  url: string;
  sandbox: Sandbox;
  close(): Promise<void>;
}

export async function startSandbox(config: SandboxConfig, options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = await createSandbox(config, options);
  const hostname = listenHost(config);
  if (!isLoopbackHost(hostname)) {
    sandbox.ctx.log(
      `listening on ${hostname}, not on loopback: anyone who can reach it can drive the control API (/_sandbox has no authentication)`,
    );
  }
  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve, reject) => {
    const server = serve({ fetch: sandbox.app.fetch, port: config.port, hostname }, (info: AddressInfo) => resolve({ server, port: info.port }));
    server.once("error", reject);
  });
  const url = config.publicUrl ?? `http://localhost:${port}`;
  sandbox.setPublicUrl(url);

  let closing: Promise<void> | null = null;
  return {
    url,
    sandbox,
    close() {
      closing ??= (async () => {
        // Requests a latency or timeout fault is holding would otherwise keep their connections open until their
        // timers end; release them so that closing is immediate (their connections are dropped).
        sandbox.ctx.apiFaults.releaseAll();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          if ("closeAllConnections" in server) server.closeAllConnections();
        });
        await sandbox.close();
      })();
      return closing;
    },
  };
}
