// Starts the whole local stack: PostgreSQL (yours via DATABASE_URL, or an embedded one), the
// migrations, the sandbox (a stand-in for the service) and the app. `npm run dev` and `npm test`
// both use it, with different ports, data folders and app modes.
import { rm } from "node:fs/promises";
import path from "node:path";
import { PRODUCT } from "../../lib/config/product";
import { applyMigrations } from "../../lib/db/migrate";
import { migrateJobSchema } from "../../lib/jobs/schema";
import { prepareStandalone } from "../standalone.mjs";
import { startEmbeddedDatabase } from "./embedded-db";
import { runToCompletion, startProcess, stopProcess, waitForHttp, type Managed } from "./processes";

export type StackOptions = {
  /** The app and sandbox configuration (see scripts/lib/local-env.ts). */
  env: Record<string, string>;
  /** An existing PostgreSQL to use; when absent, an embedded one is started. */
  databaseUrl?: string;
  /** Where the embedded database, the sandbox and the process logs keep their state. */
  dataDir: string;
  databasePort: number;
  /** A new, empty database and sandbox state (tests), or keep what is there (dev). */
  fresh: boolean;
  /** `next dev` for development, or a production build served by its standalone server (tests, bench). */
  appMode: "dev" | "start";
  /** Also start the job worker (scripts/worker.ts): the schedules and their jobs (lib/jobs/engine.ts). */
  worker?: boolean;
  /**
   * appMode "start": serve a build another stack is making instead of building again (`npm test`'s
   * second lane). The stack waits for it after starting its database and sandbox.
   */
  sharedBuild?: Promise<void>;
  /** appMode "start": told once this stack's build is ready to serve, so that another stack can share it. */
  onBuilt?: () => void;
  /** appMode "start": NODE_OPTIONS for the app's server only (the bench's BENCH_APP_NODE_OPTIONS, e.g. `--cpu-prof`). */
  appNodeOptions?: string;
  quiet?: boolean;
};

export type Stack = {
  env: NodeJS.ProcessEnv;
  databaseUrl: string;
  usingEmbeddedDatabase: boolean;
  /** The app server's process id (the bench reads its CPU time from /proc). */
  appPid: number | undefined;
  stop: () => Promise<void>;
};

const bin = (name: string) => path.resolve("node_modules/.bin", name);

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Where the app listens under `npm run dev` and `npm test`: on loopback only, never on every interface
 * (Next.js's default), so that nobody else on the network (a café's Wi-Fi, a shared office) can reach
 * the development app and its staff console. The sandbox does the same for itself (SANDBOX_HOST).
 * The host of APP_URL when that is a loopback name (so `localhost` binds what `localhost` resolves
 * to here, IPv4 or IPv6), else `localhost` (e.g. a tunnel's https URL forwards to the local port).
 * `npm start` (production) is not a dev server: its binding is the operator's choice (README).
 */
function loopbackHostFor(url: string): string {
  const { hostname } = new URL(url);
  return LOOPBACK_HOSTS.has(hostname) ? hostname.replace(/^\[(.*)\]$/, "$1") : "localhost";
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const log = (line: string) => {
    if (!options.quiet) console.log(line);
  };
  const stoppers: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stoppers.reverse()) await s().catch(() => undefined);
  };

  try {
    // 1. PostgreSQL: the developer's own when DATABASE_URL is set, otherwise an embedded one.
    let databaseUrl = options.databaseUrl;
    const usingEmbeddedDatabase = !databaseUrl;
    if (!databaseUrl) {
      const started = performance.now();
      const database = await startEmbeddedDatabase({
        dataDir: path.join(options.dataDir, "postgres"),
        port: options.databasePort,
        // Named after the product (lib/config/product.ts): after `npm run rename` a new, empty one.
        database: PRODUCT.databaseName,
        fresh: options.fresh,
      });
      stoppers.push(database.stop);
      databaseUrl = database.url;
      log(`[stack] embedded PostgreSQL on port ${options.databasePort} (${Math.round(performance.now() - started)} ms)`);
    }

    // 2. Migrations: the app's tables, then the job engine's schema and queues (as `npm run db:migrate`).
    const { applied } = await applyMigrations({ connectionString: databaseUrl });
    await migrateJobSchema(databaseUrl);
    log(`[stack] database migrated${applied.length ? ` (applied ${applied.join(", ")})` : " (up to date)"}`);

    const sandboxDataDir = path.join(options.dataDir, "sandbox");
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...options.env,
      DATABASE_URL: databaseUrl,
      SANDBOX_DATA_DIR: sandboxDataDir,
      NEXT_TELEMETRY_DISABLED: "1",
      CHECKPOINT_DISABLE: "1",
    };
    if (options.fresh) await rm(sandboxDataDir, { recursive: true, force: true });

    // 3. The sandbox: a separate process, as the real service would be.
    const logDir = path.join(options.dataDir, "logs");
    // (It listens on loopback by itself: SANDBOX_HOST in sandbox/config.ts.)
    const sandbox = startProcess("sandbox", bin("tsx"), ["sandbox/main.ts"], { env, quiet: options.quiet, logFile: path.join(logDir, "sandbox.log") });
    stoppers.push(() => stopProcess(sandbox));
    await waitForHttp(`${env.SANDBOX_URL}/_sandbox/health`, 30_000, sandbox);

    // 4. The app.
    const appPort = new URL(env.APP_URL!).port;
    const appHost = loopbackHostFor(env.APP_URL!);
    let app: Managed;
    if (options.appMode === "dev") {
      const devEnv: NodeJS.ProcessEnv = { ...env, NODE_ENV: "development" };
      app = startProcess("app", bin("next"), ["dev", "--port", appPort, "--hostname", appHost], {
        env: devEnv,
        quiet: options.quiet,
        logFile: path.join(logDir, "app.log"),
      });
    } else {
      const buildEnv: NodeJS.ProcessEnv = { ...env, NODE_ENV: "production" };
      const distDir = buildEnv.NEXT_DIST_DIR || ".next";
      let serverJs: string;
      if (options.sharedBuild) {
        // The build holds no address or secret of its own (the server reads them at run time), so
        // one build serves stacks with different ports, databases and sandboxes.
        await options.sharedBuild;
        serverJs = path.resolve(distDir, "standalone", "server.js");
      } else {
        const started = performance.now();
        const code = await runToCompletion(bin("next"), ["build"], buildEnv);
        if (code !== 0) throw new Error(`next build failed with exit code ${code}`);
        log(`[stack] next build took ${Math.round((performance.now() - started) / 1000)} s`);
        // The very artifact a deployment runs (next.config.mjs `output: "standalone"`, the Dockerfile):
        // the standalone server, with the static files beside it as the image has them.
        serverJs = prepareStandalone(distDir);
        options.onBuilt?.();
      }
      app = startProcess("app", process.execPath, [serverJs], {
        env: { ...buildEnv, PORT: appPort, HOSTNAME: appHost, ...(options.appNodeOptions ? { NODE_OPTIONS: options.appNodeOptions } : {}) },
        quiet: options.quiet,
        logFile: path.join(logDir, "app.log"),
      });
    }
    stoppers.push(() => stopProcess(app));
    await waitForHttp(`${env.APP_URL}/`, 120_000, app);

    // 5. The job worker, when asked for.
    if (options.worker) {
      const worker = startProcess("worker", bin("tsx"), ["--conditions=react-server", "scripts/worker.ts"], {
        env,
        quiet: options.quiet,
        logFile: path.join(logDir, "worker.log"),
      });
      stoppers.push(() => stopProcess(worker));
    }

    return { env, databaseUrl, usingEmbeddedDatabase, appPid: app.child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
