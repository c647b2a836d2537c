// The job kinds (lib/jobs/kinds.ts): declared once, in two halves, the queue facts and the work
// (lib/jobs/engine.ts, JOB_WORK). These read the declarations as they are, so a fork's own kinds are
// checked the same way: both halves name the same kinds, every kind's queues and schedule are
// created by `npm run db:migrate` (lib/jobs/schema.ts, run here against a stand-in for pg-boss), and
// the environment accepts exactly the declared kinds.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";

/** What migrateJobSchema asked of pg-boss, in order; `stored` is the schedules the database holds. */
const calls = {
  createQueue: [] as { name: string; options: Record<string, unknown> }[],
  schedule: [] as { name: string; cron: string; options: unknown }[],
  unschedule: [] as string[],
  stored: new Map<string, { name: string; key: string }>(),
};

// A stand-in for pg-boss: no database; the queues it was asked to create and the schedules it keeps.
vi.mock("pg-boss", () => ({
  PgBoss: class {
    on() {}
    async start() {}
    async stop() {}
    async getQueue() {
      return null; // an empty database: every queue is created
    }
    async createQueue(name: string, options: Record<string, unknown>) {
      calls.createQueue.push({ name, options });
    }
    async updateQueue() {}
    async schedule(name: string, cron: string, _data: unknown, options: unknown) {
      calls.schedule.push({ name, cron, options });
      calls.stored.set(name, { name, key: "" });
    }
    async getSchedules() {
      return [...calls.stored.values()];
    }
    async unschedule(name: string) {
      calls.unschedule.push(name);
      calls.stored.delete(name);
    }
  },
}));

const { JOB_KINDS, JOB_KIND_NAMES, isJobKind } = await import("@/lib/jobs/kinds");
const { ALERT_QUEUES, QUEUE_DEFINITIONS } = await import("@/lib/jobs/queues");
const { jobSchemaIsReady, migrateJobSchema } = await import("@/lib/jobs/schema");
const { JOB_WORK } = await import("@/lib/jobs/engine");
const { environmentProblems } = await import("@/lib/env");
const { generateLocalEnv } = await import("../../scripts/lib/local-env");

const kinds = () => JOB_KIND_NAMES.map((name) => ({ name, ...JOB_KINDS[name] }));

describe("the job kinds", () => {
  it("are the same kinds in the queue facts and in the work registry", () => {
    expect(JOB_KIND_NAMES.length).toBeGreaterThan(0);
    expect(Object.keys(JOB_WORK).sort()).toEqual([...JOB_KIND_NAMES].sort());
    for (const name of JOB_KIND_NAMES) {
      expect(typeof JOB_WORK[name].findDue, name).toBe("function");
      expect(typeof JOB_WORK[name].work, name).toBe("function");
    }
  });

  it("each have queues of their own: no queue name is used twice, by two kinds or by a kind and the alerts", () => {
    const names = [...kinds().flatMap((kind) => [kind.fanOutQueue, kind.installQueue, kind.deadLetterQueue]), ALERT_QUEUES.delivery, ALERT_QUEUES.deadLetter];
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(QUEUE_DEFINITIONS.map((queue) => queue.name)).size).toBe(QUEUE_DEFINITIONS.length);
  });

  it("each have their queues created, their dead letters first, and their schedule set by the job schema's migration", async () => {
    calls.createQueue = [];
    calls.schedule = [];
    calls.unschedule = [];
    calls.stored.clear();
    const result = await migrateJobSchema("postgresql://unused");
    expect(result.removedSchedules).toEqual([]);
    const created = calls.createQueue.map((call) => call.name);
    for (const kind of kinds()) {
      const fanOut = calls.createQueue.find((call) => call.name === kind.fanOutQueue);
      const perInstall = calls.createQueue.find((call) => call.name === kind.installQueue);
      expect(fanOut?.options, kind.name).toMatchObject({ policy: "singleton" });
      // Keyed by install: one waiting and one running job per install (lib/jobs/queues.ts).
      expect(perInstall?.options, kind.name).toMatchObject({
        policy: "stately",
        deadLetter: kind.deadLetterQueue,
        expireInSeconds: kind.expireInSeconds,
        ...kind.retries,
      });
      // pg-boss refuses a dead-letter queue that does not exist yet.
      expect(created.indexOf(kind.deadLetterQueue), kind.name).toBeGreaterThanOrEqual(0);
      expect(created.indexOf(kind.deadLetterQueue), kind.name).toBeLessThan(created.indexOf(kind.installQueue));
      expect(calls.schedule.filter((call) => call.name === kind.fanOutQueue), kind.name).toEqual([{ name: kind.fanOutQueue, cron: kind.cron, options: { tz: "UTC", missed: "once" } }]);
    }
    // Nothing is scheduled that is not a kind's fan-out.
    expect(calls.schedule.map((call) => call.name).sort()).toEqual(kinds().map((kind) => kind.fanOutQueue).sort());
  });

  it("are the only schedules after a migration: a kind removed from the declarations has its schedule removed", async () => {
    calls.unschedule = [];
    calls.stored = new Map([["usage-report", { name: "usage-report", key: "" }]]); // a kind a release removed
    const lines: string[] = [];
    const result = await migrateJobSchema("postgresql://unused", (line) => lines.push(line));
    expect(calls.unschedule).toEqual(["usage-report"]);
    expect(result.removedSchedules).toEqual(["usage-report"]);
    expect(lines).toContain("removed the schedule of usage-report: no job kind declares it (lib/jobs/kinds.ts)");
    expect([...calls.stored.keys()].sort()).toEqual(kinds().map((kind) => kind.fanOutQueue).sort());
  });

  it("each have their queues checked by /api/ready's job schema check", async () => {
    const asked: string[][] = [];
    const ready = await jobSchemaIsReady(async <T>(text: string, values: unknown[]) => {
      if (text.includes("to_regclass")) return [{ present: true }] as T[];
      asked.push(values[0] as string[]);
      return [{ found: (values[0] as string[]).length }] as T[];
    });
    expect(ready).toBe(true);
    for (const kind of kinds()) expect(asked[0]).toEqual(expect.arrayContaining([kind.fanOutQueue, kind.installQueue, kind.deadLetterQueue]));
  });

  it("each answer at /api/cron/<kind>: no route of its own shadows a kind, and inherited names are no kind", () => {
    // app/api/cron/[job] serves every kind; a folder beside it (alerts) is matched first by Next.js.
    const folders = readdirSync(join(__dirname, "../../app/api/cron"), { withFileTypes: true }).filter((entry) => entry.isDirectory() && entry.name !== "[job]");
    for (const folder of folders) expect(isJobKind(folder.name), folder.name).toBe(false);
    for (const name of JOB_KIND_NAMES) expect(isJobKind(name)).toBe(true);
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", ""]) expect(isJobKind(name), name).toBe(false);
  });
});

describe("the retention kind", () => {
  it("keys a job per table with a window rule beside the revoked installs, and takes no other key for a table", async () => {
    const { tableJobKey, tableOfJobKey } = await import("@/lib/retention/purge");
    const { windowRules } = await import("@/lib/retention/rules");
    const tables = windowRules().map(({ table }) => table);
    expect(tables).toContain("sync_runs");
    for (const table of tables) expect(tableOfJobKey(tableJobKey(table)), table).toBe(table);
    // An install's row id is an install's key; a table without a window, or no table, is no table key.
    for (const key of ["0b7e6f4e-8a0e-4d61-9d39-1f0b2d7c1a11", "table:installs", "table:constructor", "table:", "sync_runs"]) {
      expect(tableOfJobKey(key), key).toBeNull();
    }
    // At least hourly, so each run deletes about an hour's history (lib/jobs/kinds.ts).
    expect(JOB_KINDS.retention.cron.split(" ")[1]).toBe("*");
  });
});

describe("WORKER_JOBS and JOB_EXPIRE_SECONDS", () => {
  const local = generateLocalEnv({ app: 3000, sandbox: 4010 });
  const problemsWith = (name: string, value: string) => environmentProblems({ ...local, [name]: value }).filter((p) => p.startsWith(name));

  it("accept every declared kind, alone or all together", () => {
    for (const name of JOB_KIND_NAMES) {
      expect(problemsWith("WORKER_JOBS", name), name).toEqual([]);
      expect(problemsWith("JOB_EXPIRE_SECONDS", `${name}=60`), name).toEqual([]);
    }
    expect(problemsWith("WORKER_JOBS", JOB_KIND_NAMES.join(","))).toEqual([]);
    expect(problemsWith("JOB_EXPIRE_SECONDS", JOB_KIND_NAMES.map((name) => `${name}=60`).join(","))).toEqual([]);
  });

  it("refuse a name that is no kind (a queue's name is not a kind's)", () => {
    for (const value of ["payments", JOB_KINDS[JOB_KIND_NAMES[0]].installQueue, "constructor"]) {
      expect(problemsWith("WORKER_JOBS", value), value).toHaveLength(1);
      expect(problemsWith("JOB_EXPIRE_SECONDS", `${value}=60`), value).toHaveLength(1);
    }
  });
});
