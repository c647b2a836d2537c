// The job engine's schema (pg-boss's tables in the `pgboss` schema), its queues and its schedules,
// created and migrated by `npm run db:migrate`, beside the Prisma migrations.
//
// Why here and not when a process starts: pg-boss can create and migrate its schema from `start()`,
// but then every app instance and worker of a rolling deploy would race to do it (pg-boss copes, with
// a lock) and a web instance would need rights to change the schema. A release migrates once, before
// it rolls, as it does for the app's own tables (docs/deploying.md); every process then starts pg-boss
// with `migrate: false`, which refuses to run on a schema that is missing or behind, and /api/ready says
// "pending" until this has run (lib/health.ts).
//
// Queue settings are applied on every run (createQueue for a new queue, updateQueue for an existing
// one), so changing a retry limit in lib/jobs/kinds.ts or lib/jobs/queues.ts takes effect at the next
// release. The schedules are made exactly the kinds' (lib/jobs/kinds.ts): a kind removed there has its
// schedule removed here, or pg-boss would go on sending a job to a queue that nothing works. Its
// queues are kept, with their jobs, for staff to read (docs/adding-a-feature.md).
//
// Not server-only on purpose: scripts/migrate.ts and the test stack run it outside Next.js.
import { PgBoss } from "pg-boss";
import { PRODUCT } from "../config/product";
import { poolSize, POOLS } from "../db/connection-budget";
import { JOB_SCHEMA, QUEUE_DEFINITIONS, SCHEDULES } from "./queues";

export type JobSchemaResult = { queues: string[]; schedules: string[]; removedSchedules: string[] };

export async function migrateJobSchema(connectionString: string, log: (line: string) => void = () => {}): Promise<JobSchemaResult> {
  const boss = new PgBoss({
    connectionString,
    schema: JOB_SCHEMA,
    max: poolSize("jobSchema"),
    application_name: PRODUCT.postgresApplicationName(POOLS.jobSchema.purpose),
    // Only the schema: no maintenance, no cron pass, no registry row for a process that lives seconds.
    migrate: true,
    supervise: false,
    schedule: false,
    registerInstance: false,
  });
  let failure: Error | undefined;
  boss.on("error", (error) => (failure ??= error));
  await boss.start();
  try {
    for (const { name, ...options } of QUEUE_DEFINITIONS) {
      const existing = await boss.getQueue(name);
      if (!existing) {
        await boss.createQueue(name, options);
        log(`created job queue ${name}`);
      } else {
        // The policy of an existing queue cannot change (pg-boss keeps its indexes by policy); a new
        // policy needs a new queue name.
        if (existing.policy !== (options.policy ?? "standard")) {
          throw new Error(`job queue ${name} exists with policy ${existing.policy}, not ${options.policy}: give the queue a new name`);
        }
        // Everything else is updated in place (pg-boss refuses an option given as undefined).
        const { policy: _policy, ...updatable } = options;
        void _policy;
        await boss.updateQueue(name, Object.fromEntries(Object.entries(updatable).filter(([, value]) => value !== undefined)));
      }
    }
    for (const { queue, cron } of SCHEDULES) {
      // tz UTC: the same instant on every machine. `missed: "once"`: after downtime, one catch-up run.
      await boss.schedule(queue, cron, null, { tz: "UTC", missed: "once" });
    }
    const declared = new Set(SCHEDULES.map((s) => s.queue));
    const removedSchedules: string[] = [];
    for (const { name, key } of await boss.getSchedules()) {
      if (declared.has(name)) continue;
      await boss.unschedule(name, key);
      removedSchedules.push(name);
      log(`removed the schedule of ${name}: no job kind declares it (lib/jobs/kinds.ts)`);
    }
    if (failure) throw failure;
    return { queues: QUEUE_DEFINITIONS.map((q) => q.name), schedules: SCHEDULES.map((s) => `${s.queue} (${s.cron})`), removedSchedules };
  } finally {
    await boss.stop({ graceful: false });
  }
}

/**
 * Whether the job schema this code needs is in place: pg-boss's tables and every queue. Used by
 * /api/ready (lib/health.ts) on the app's own connection: two short queries.
 */
export async function jobSchemaIsReady(query: <T>(text: string, values: unknown[]) => Promise<T[]>): Promise<boolean> {
  const [schema] = await query<{ present: boolean }>(`SELECT to_regclass('${JOB_SCHEMA}.queue') IS NOT NULL AS present`, []);
  if (!schema?.present) return false;
  const names = QUEUE_DEFINITIONS.map((q) => q.name);
  const [queues] = await query<{ found: number }>(`SELECT count(*)::int AS found FROM ${JOB_SCHEMA}.queue WHERE name = ANY ($1::text[])`, [names]);
  return queues?.found === names.length;
}
