// Each resource's latest sync outcome (sync_latest, lib/sync/latest.ts): written by the transaction
// that ends the run, for any resource the sync runs (a fork's own included), read by the staff
// console's "sync failing" filter and its counts instead of the runs' history, and filled from
// sync_runs by the migration that made it.
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MIGRATIONS_DIR, applyMigrations } from "../../lib/db/migrate";
import { createScratchDatabase } from "../helpers/database";
import { armApiFault, clearApiFaults, closeSql, control, installViaPortal, resetWorld, sql } from "../helpers/stack";
import { scaled } from "../helpers/time-scale";

const { syncInstall } = await import("@/lib/sync");
const { syncResource } = await import("@/lib/sync/engine");
const { defineSyncResource } = await import("@/lib/sync/resource");
const { readSyncConfig } = await import("@/lib/sync/config");
const { fetchInstallList, parseInstallListQuery } = await import("@/lib/admin/install-list");

beforeEach(resetWorld);
afterEach(clearApiFaults);
afterAll(closeSql);

const NORTHWIND = 1001;
const MIGRATION = "20261127020000_sync_latest";

type LatestRow = { resource: string; started_at: Date; finished_at: Date | null; outcome: string; error_kind: string | null };
const latestOf = (installRowId: string) =>
  sql<LatestRow>("SELECT resource, started_at, finished_at, outcome, error_kind FROM sync_latest WHERE install_row_id = $1 ORDER BY resource", [installRowId]);
const endedRunsOf = (installRowId: string, startedAt: Date) =>
  sql<LatestRow>(
    "SELECT resource, started_at, finished_at, outcome, error_kind FROM sync_runs WHERE install_row_id = $1 AND started_at = $2 ORDER BY resource",
    [installRowId, startedAt],
  );
const failingIds = async () => {
  const list = await fetchInstallList(parseInstallListQuery({ sync: "failing" }));
  return { ids: list.items.map((item) => item.id), matching: list.matching };
};

/** A resource no shipped file declares, as `npm run new:resource` would add one: never granted here, so its run is skipped without a request. */
const widgets = (name: string) =>
  defineSyncResource({
    name,
    label: "widgets",
    table: "synced_widgets",
    path: "/teams",
    scopeResource: "widgets",
    scopeWords: {},
    incremental: false,
    toRow: () => null,
    keeps: () => true,
    disabledBy: () => false,
    upsert: async () => 0,
    pruneOutOfScope: async () => 0,
  });

const runOf = (installRowId: string, now: Date) => ({
  installRowId,
  grantedScopes: ["charge-points:read"],
  config: readSyncConfig(null),
  now,
  signal: new AbortController().signal,
  perPage: 5,
  fullPassEveryMs: 3_600_000,
});

describe("the sync writes each resource's latest outcome", () => {
  it("a list that fails is its resource's latest outcome, the same as its run's row; the console lists the install as failing from it, with no run history, until a later sync completes", async () => {
    await control("POST", "/app/scopes", { scopes: ["charge-points:read", "charge-transactions:read", "teams:read"] });
    const install = await installViaPortal(NORTHWIND);
    await armApiFault({ path: "/teams", mode: "error503", forMs: 60_000, installId: install.installId });
    const first = new Date(Date.now() - 60_000);
    expect((await syncInstall(install.installRowId, { perPage: 5, now: first })).outcome).toBe("failed");

    const latest = await latestOf(install.installRowId);
    expect(latest.map((row) => [row.resource, row.outcome, row.error_kind])).toEqual(
      expect.arrayContaining([
        ["charge_points", "completed", null],
        ["charges", "completed", null],
        ["teams", "failed", "unavailable"],
      ]),
    );
    // Exactly what the runs' rows say (started_at, finished_at, outcome, reason), resource by resource.
    expect(latest).toEqual(await endedRunsOf(install.installRowId, first));
    expect(await failingIds()).toEqual({ ids: [install.installRowId], matching: 1 });

    // The console reads no history: with every run deleted (as a purge of old runs may), the install is still failing.
    await sql("DELETE FROM sync_runs WHERE install_row_id = $1", [install.installRowId]);
    expect(await failingIds()).toEqual({ ids: [install.installRowId], matching: 1 });

    // The storm passes: the next sync replaces each latest outcome, and the install is no longer failing.
    await clearApiFaults();
    const second = new Date();
    expect((await syncInstall(install.installRowId, { perPage: 5, now: second })).outcome).toBe("completed");
    expect((await latestOf(install.installRowId)).filter((row) => row.resource === "teams")).toEqual([
      expect.objectContaining({ outcome: "completed", error_kind: null, started_at: second }),
    ]);
    expect(await failingIds()).toEqual({ ids: [], matching: 0 });
    const [row] = (await fetchInstallList(parseInstallListQuery({ q: String(install.installId) }))).items;
    expect(row).toMatchObject({ syncHealth: "up_to_date", lastSyncRunAt: second });
  }, scaled(60_000));

  it("a resource outside the shipped ones has its latest outcome too, and a run's end and its latest outcome commit together or not at all", async () => {
    const install = await installViaPortal(NORTHWIND);
    const now = new Date();
    expect(await syncResource(widgets("fork_widgets"), runOf(install.installRowId, now))).toMatchObject({ outcome: "skipped", reason: "scope_not_granted" });
    expect(await latestOf(install.installRowId)).toEqual([expect.objectContaining({ resource: "fork_widgets", outcome: "skipped", error_kind: "scope_not_granted", started_at: now })]);

    // The latest outcome's write refused (a constraint for this test): the run's end is not written either.
    await sql("ALTER TABLE sync_latest ADD CONSTRAINT refuses_fork_gadgets CHECK (resource <> 'fork_gadgets')");
    try {
      await expect(syncResource(widgets("fork_gadgets"), runOf(install.installRowId, now))).rejects.toThrow();
    } finally {
      await sql("ALTER TABLE sync_latest DROP CONSTRAINT refuses_fork_gadgets");
    }
    expect(await sql("SELECT outcome, finished_at FROM sync_runs WHERE install_row_id = $1 AND resource = 'fork_gadgets'", [install.installRowId])).toEqual([
      { outcome: "running", finished_at: null },
    ]);
    expect((await latestOf(install.installRowId)).map((row) => row.resource)).toEqual(["fork_widgets"]);
  });

  it("an older run that ends after a newer one does not replace the newer one's outcome", async () => {
    const install = await installViaPortal(NORTHWIND);
    const newer = new Date();
    await syncResource(widgets("fork_widgets"), runOf(install.installRowId, newer));
    await syncResource(widgets("fork_widgets"), runOf(install.installRowId, new Date(newer.getTime() - 60_000)));
    expect(await latestOf(install.installRowId)).toEqual([expect.objectContaining({ started_at: newer })]);
  });
});

describe("the migration that made sync_latest", () => {
  it("fills it from sync_runs: per install and resource the latest run that ended, a running one never", async () => {
    // Every migration before it, then runs as they stood, then it (and those after it, which may read its table).
    const database = await createScratchDatabase();
    const before = await mkdtemp(path.join(tmpdir(), "migrations-"));
    const client = new pg.Client({ connectionString: database.url });
    try {
      const isBefore = (source: string) => {
        const folder = path.relative(DEFAULT_MIGRATIONS_DIR, source).split(path.sep)[0]!;
        return !/^\d{14}_/.test(folder) || folder < MIGRATION;
      };
      await cp(DEFAULT_MIGRATIONS_DIR, before, { recursive: true, filter: isBefore });
      const fromIt = (await readdir(DEFAULT_MIGRATIONS_DIR)).filter((name) => /^\d{14}_/.test(name) && name >= MIGRATION).sort();
      await applyMigrations({ connectionString: database.url, migrationsDir: before });
      await client.connect();
      const { rows: installs } = await client.query<{ id: string }>(
        `INSERT INTO installs (id, install_id, client_id, operator_id, granted_scopes, status, created_at, status_changed_at, updated_at)
         SELECT gen_random_uuid(), n, 'client', n::text, ARRAY['charge-points:read'], 'ACTIVE', now(), now(), now() FROM generate_series(1, 2) AS n
         RETURNING id`,
      );
      const [a, b] = installs.map((row) => row.id);
      await client.query(
        `INSERT INTO sync_runs (id, install_row_id, resource, started_at, finished_at, outcome, error_kind) VALUES
           (gen_random_uuid(), $1, 'teams',         '2026-11-01T10:00:00Z', '2026-11-01T10:00:01Z', 'completed', NULL),
           (gen_random_uuid(), $1, 'teams',         '2026-11-01T10:15:00Z', '2026-11-01T10:15:02Z', 'failed', 'unavailable'),
           (gen_random_uuid(), $1, 'charge_points', '2026-11-01T10:00:00Z', '2026-11-01T10:00:03Z', 'failed', 'timeout'),
           (gen_random_uuid(), $1, 'charge_points', '2026-11-01T10:15:00Z', '2026-11-01T10:15:04Z', 'completed', NULL),
           (gen_random_uuid(), $1, 'charges',       '2026-11-01T10:00:00Z', '2026-11-01T10:00:05Z', 'completed', NULL),
           (gen_random_uuid(), $1, 'charges',       '2026-11-01T10:15:00Z', NULL, 'running', NULL),
           (gen_random_uuid(), $2, 'teams',         '2026-11-01T10:15:00Z', NULL, 'running', NULL)`,
        [a, b],
      );

      expect((await applyMigrations({ connectionString: database.url })).applied).toEqual(fromIt);

      const { rows } = await client.query<{ install_row_id: string; resource: string; started_at: Date; outcome: string; error_kind: string | null }>(
        "SELECT install_row_id, resource, started_at, outcome, error_kind FROM sync_latest ORDER BY install_row_id = $1 DESC, resource",
        [a],
      );
      expect(rows).toEqual([
        { install_row_id: a, resource: "charge_points", started_at: new Date("2026-11-01T10:15:00Z"), outcome: "completed", error_kind: null },
        { install_row_id: a, resource: "charges", started_at: new Date("2026-11-01T10:00:00Z"), outcome: "completed", error_kind: null },
        { install_row_id: a, resource: "teams", started_at: new Date("2026-11-01T10:15:00Z"), outcome: "failed", error_kind: "unavailable" },
      ]);
    } finally {
      await client.end().catch(() => {});
      await rm(before, { recursive: true, force: true });
      await database.drop();
    }
  });
});
