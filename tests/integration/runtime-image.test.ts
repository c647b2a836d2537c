// The container images' three targets, without a container runtime: scripts/assemble-runtime.sh and
// scripts/assemble-jobs.mjs lay out each image's files exactly as the Dockerfile copies them, and each
// process started from its folder alone does its work:
//   runtime  the server serves pages with their static files, and is ready (it finds the migrations it compares)
//   migrate  the bundle migrates an empty database (the app's tables and the job engine's schema)
//   worker   the bundle starts, works its schedules' first runs, and drains on SIGTERM
// The folders are in the system's temporary directory, with no node_modules above them: a bundle that
// still needed a package from node_modules would fail here as it would in its image.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { freePort } from "../helpers/callback";
import { createScratchDatabase, type ScratchDatabase } from "../helpers/database";
import { scaled } from "../helpers/time-scale";

const out = mkdtempSync(path.join(tmpdir(), "runtime-image-"));
const databases: ScratchDatabase[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  // A failed test must not leave its process behind.
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
afterAll(async () => {
  rmSync(out, { recursive: true, force: true });
  await Promise.all(databases.map((database) => database.drop()));
});

/** Every file under dir, relative to it, in name order. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** The image's folder, as scripts/assemble-jobs.mjs lays it out for the Dockerfile. */
function assembleJob(name: "worker" | "migrate"): string {
  const dir = path.join(out, name);
  execFileSync(process.execPath, ["scripts/assemble-jobs.mjs", name, dir], { stdio: "pipe" });
  // Nothing to resolve a package from: not in the folder, not above it.
  for (let up = dir; up !== path.dirname(up); up = path.dirname(up)) expect(existsSync(path.join(up, "node_modules"))).toBe(false);
  return dir;
}

type Run = { child: ChildProcess; output: () => string; exited: Promise<number | null>; waitFor: (pattern: RegExp) => Promise<void> };

/** `node <file>` in dir, as the image's CMD runs it, with the stack's configuration and overrides. */
function run(dir: string, file: string, overrides: Record<string, string>): Run {
  const child = spawn(process.execPath, [file], {
    cwd: dir,
    env: { ...process.env, NODE_ENV: "production", NODE_PATH: "", LOG_LEVEL: "info", ...overrides },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  for (const stream of [child.stdout!, child.stderr!]) stream.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  /** Resolves once the output matches: a fact the process reported, rather than a guess about time. */
  async function waitFor(pattern: RegExp): Promise<void> {
    for (let waited = 0; waited < 30_000; waited += 50) {
      if (pattern.test(output)) return;
      if (done) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the process never printed ${pattern}; its output:\n${output.slice(-3000)}`);
  }
  return { child, output: () => output, exited, waitFor };
}

/** The migrate image's job on a new, empty database; returns the database once migrated. */
async function migratedWithBundle(dir: string): Promise<{ database: ScratchDatabase; output: string }> {
  const database = await createScratchDatabase();
  databases.push(database);
  const migrate = run(dir, "migrate.mjs", { DATABASE_URL: database.url });
  expect(await migrate.exited, migrate.output()).toBe(0);
  return { database, output: migrate.output() };
}

describe("the images' layout", () => {
  it("serves pages, their static files and a ready /api/ready from the assembled folder alone", async () => {
    const distDir = process.env.NEXT_DIST_DIR || ".next";
    const dir = path.join(out, "runtime");
    execFileSync("sh", ["scripts/assemble-runtime.sh", distDir, dir], { stdio: "pipe" });
    expect(existsSync(path.join(dir, ".env"))).toBe(false); // a local .env never travels into an image

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, ["server.js"], {
      cwd: dir,
      env: { ...process.env, NODE_ENV: "production", PORT: String(port), HOSTNAME: "127.0.0.1", __NEXT_PROCESSED_ENV: "true" },
      stdio: "ignore",
    });
    try {
      let ready: Response | undefined;
      for (let i = 0; i < 100 && !ready?.ok; i++) {
        ready = await fetch(`${base}/api/ready`).catch(() => undefined);
        if (!ready?.ok) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(ready?.status).toBe(200);
      expect(await ready!.json()).toMatchObject({ status: "ready", checks: { database: "ok", migrations: "ok" } });

      const html = await (await fetch(`${base}/`)).text();
      const asset = /(?:href|src)="(\/_next\/static\/[^"]+)"/.exec(html)?.[1];
      expect(asset).toBeDefined();
      expect((await fetch(`${base}${asset}`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
  });

  it("migrates an empty database from the migrate image's folder alone, and finds it up to date the second time", { timeout: scaled(60_000) }, async () => {
    const dir = assembleJob("migrate");
    const migrations = readdirSync("prisma/migrations").filter((name) => !name.endsWith(".toml"));
    expect(filesUnder(dir)).toEqual(["README", "migrate.mjs", ...filesUnder("prisma/migrations").map((file) => path.join("prisma", "migrations", file))].sort());

    const { database, output } = await migratedWithBundle(dir);
    expect(output).toContain(`db:migrate: applied ${migrations.length} migration(s)`);
    expect(output).toMatch(/db:migrate: job engine ready \(\d+ queues;/);

    const again = run(dir, "migrate.mjs", { DATABASE_URL: database.url });
    expect(await again.exited, again.output()).toBe(0);
    expect(again.output()).toContain(`db:migrate: the database is up to date (${migrations.length} migration(s) already applied).`);
  });

  it("starts the worker from the worker image's folder alone, works its schedules' first runs, and drains on SIGTERM", { timeout: scaled(60_000) }, async () => {
    const dir = assembleJob("worker");
    expect(filesUnder(dir)).toEqual(["README", "worker.mjs"]);
    const { database } = await migratedWithBundle(assembleJob("migrate"));

    const worker = run(dir, "worker.mjs", { DATABASE_URL: database.url });
    await worker.waitFor(/"msg":"worker started"/);
    // Each schedule's first run is a job the worker takes from the queue and works: its fan-out reads
    // the installs through the Prisma client (its WebAssembly query compiler is in the bundle too).
    await worker.waitFor(/"msg":"keep-alive fan-out enqueued the due installs"/);
    await worker.waitFor(/"msg":"reconcile fan-out enqueued the due installs"/);
    worker.child.kill("SIGTERM");
    expect(await worker.exited, worker.output()).toBe(0);
    expect(worker.output()).toMatch(/"msg":"worker stopped"/);
  });
});
