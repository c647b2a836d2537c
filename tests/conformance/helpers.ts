// The conformance checks judged against the deliberately wrong app (wrong-app.ts) and an in-process sandbox registered
// with its addresses: no database, no build, a second or two per check.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { CHECKS } from "../../conformance/checks";
import { runConformance } from "../../conformance/run";
import type { CheckResult } from "../../conformance/types";
import { startSandbox, type RunningSandbox } from "../../sandbox/server.js";
import { WrongApp, type Wrongness } from "./wrong-app";

const CLIENT = { clientId: "wrong-app", clientSecret: "wrong-app-secret-0123456789", webhookSecret: "whsec_wrong_app_0123456789", cronSecret: "cron-secret-0123456789" };

export interface WrongAppWorld {
  app: WrongApp;
  sandbox: RunningSandbox;
  /** Runs one check against the app with the given ways of getting it wrong (none: the app keeps every obligation). */
  judge(checkId: string, ...wrong: Wrongness[]): Promise<CheckResult>;
  /** Runs several checks in one run (the whole-run checks judge what the others caused). */
  judgeRun(checkIds: string[], ...wrong: Wrongness[]): Promise<CheckResult[]>;
}

/**
 * Starts the wrong app and a sandbox registered with its redirect_uri and webhook URL, for the file's tests.
 * `webhookUrl`: another receiver for the sandbox's deliveries, given the app's webhook URL (webhook-front.ts).
 */
export function setUpWrongAppWorld(options: { webhookUrl?: (appWebhookUrl: string) => Promise<string> } = {}): WrongAppWorld {
  const app = new WrongApp();
  let sandbox: RunningSandbox | undefined;
  let dataDir = "";
  beforeAll(async () => {
    await app.listen();
    dataDir = await mkdtemp(path.join(tmpdir(), "conformance-wrong-app-"));
    const webhookUrl = options.webhookUrl ? await options.webhookUrl(app.webhookUrl) : app.webhookUrl;
    sandbox = await startSandbox(
      {
        port: 0,
        dataDir,
        client: { clientId: CLIENT.clientId, clientSecret: CLIENT.clientSecret, redirectUri: app.redirectUri, requestedScopes: ["charge-points:read"], appName: "Wrong App" },
        webhook: { url: webhookUrl, secret: CLIENT.webhookSecret, timeoutMs: 10_000 },
        refreshDelayMs: 50,
        rateLimit: { limit: 1000, windowSeconds: 60 },
        operatorCount: 6,
      },
      { log: () => undefined },
    );
    app.configure({ sandboxUrl: sandbox.url, ...CLIENT });
  });
  afterAll(async () => {
    await sandbox?.close();
    await app.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  return {
    app,
    get sandbox() {
      return sandbox!;
    },
    async judge(checkId, ...wrong) {
      return (await this.judgeRun([checkId], ...wrong))[0]!;
    },
    async judgeRun(checkIds, ...wrong) {
      const checks = checkIds.map((id) => {
        const check = CHECKS.find((c) => c.id === id);
        if (!check) throw new Error(`no check ${id}`);
        return check;
      });
      await fetch(`${sandbox!.url}/_sandbox/reset`, { method: "POST" });
      app.reset(...wrong);
      const report = await runConformance(
        {
          sandboxUrl: sandbox!.url,
          pageUrl: `${app.url}/dashboard`,
          keepAlive: { url: `${app.url}/cron/keep-alive`, secret: CLIENT.cronSecret },
          jobs: [{ url: `${app.url}/cron/sync`, secret: CLIENT.cronSecret }],
          advanceAppClock: async (seconds) => {
            await fetch(`${app.url}/_test/clock`, { method: "POST", body: JSON.stringify({ seconds }) });
          },
        },
        { checks },
      );
      return report.results;
    },
  };
}

/** The evidence as one string, for `toContain`/`toMatch`. */
export const evidenceOf = (result: CheckResult) => result.evidence.join("\n");
