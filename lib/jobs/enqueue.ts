// The job engine's low half: the process's pg-boss, and the jobs the rest of the app sends.
//
// This file sends; it never runs a job. What runs them, the registry of each job kind's work
// (lib/jobs/engine.ts, JOB_WORK), is imported only by the worker
// (scripts/worker.ts) and the cron routes (lib/jobs/cron-route.ts, app/api/cron/[job]). Keeping the two
// apart keeps the imports pointing one way: an alert raised by the install state machine
// (lib/alerts/raise.ts), a webhook's follow-up (lib/webhooks/receive.ts), the redirect_uri's first
// sync (lib/installs/connect.ts) and the staff console's "Sync now" (lib/admin/actions.ts) only send,
// so they import this file, which imports none of the jobs that in turn import them. `npm run lint`
// checks it (.dependency-cruiser.mjs, no-circular).
//
// One pg-boss per process, started on first use: the worker starts it as "worker" (schedules,
// maintenance, a larger pool); the app as "app" when it first sends a job or a cron route is called
// (no schedules, no maintenance, a small pool).
//
// Job kinds, their queues, retries and cadences are declared in lib/jobs/kinds.ts (the facts only, no
// work: safe to import here); `npm run db:migrate` creates the queues (lib/jobs/queues.ts,
// lib/jobs/schema.ts). Every process starts pg-boss with `migrate: false`.
import "server-only";
import { PgBoss, fromPrisma, type SendOptions } from "pg-boss";
import { PRODUCT } from "@/lib/config/product";
import type { Tx } from "@/lib/db/client";
import { poolSize, POOLS, reportOpenConnections } from "@/lib/db/connection-budget";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import { JOB_KINDS, type JobCause, type JobKind } from "./kinds";
import { JOB_SCHEMA } from "./queues";

/** What a per-install job carries: the install's row id (the singleton key too), and who asked. */
export type InstallJobData = { installRowId: string; cause: JobCause };

/**
 * A per-install job's expiry, when JOB_EXPIRE_SECONDS sets one for its kind: how long a worker may hold
 * it before it counts as abandoned (the worker died) and is retried elsewhere. Otherwise the queue's
 * kind's default applies (expireInSeconds in lib/jobs/kinds.ts). pg-boss copies the expiry onto each job as it is inserted.
 */
export function expiryOf(kind: JobKind): { expireInSeconds?: number } {
  const seconds = env().JOB_EXPIRE_SECONDS?.[kind];
  return seconds === undefined ? {} : { expireInSeconds: seconds };
}

/**
 * How often a worker's pg-boss looks for expired jobs (its supervise and monitor passes, 60 s by
 * default): with a short JOB_EXPIRE_SECONDS, a third of the shortest, so that a dead worker's job is
 * retried soon after its expiry rather than up to a minute later.
 */
function supervisePassSeconds(): number {
  const shortest = Math.min(...Object.values(env().JOB_EXPIRE_SECONDS ?? {}));
  return Math.min(60, Math.max(1, Math.floor(shortest / 3)));
}

// ----- one engine per process ------------------------------------------------------------------

type Role = "app" | "worker";
type EngineState = { role: Role; started: Promise<PgBoss> };

// On globalThis: Next.js bundles each route separately, and `next dev` reloads modules.
const ENGINE_KEY = Symbol.for("partner-app.job-engine");
const globalWithEngine = globalThis as typeof globalThis & { [ENGINE_KEY]?: EngineState };

/** The process's pg-boss, started on first use. `role` counts on the first call only. */
export function jobEngine(role: Role = "app"): Promise<PgBoss> {
  const current = globalWithEngine[ENGINE_KEY];
  if (current) return current.started;
  const started = startEngine(role).catch((error: unknown) => {
    // Not cached: the next call tries again (the schema may be migrated meanwhile).
    delete globalWithEngine[ENGINE_KEY];
    throw error;
  });
  globalWithEngine[ENGINE_KEY] = { role, started };
  return started;
}

async function startEngine(role: Role): Promise<PgBoss> {
  const config = env();
  const worker = role === "worker";
  const boss = new PgBoss({
    connectionString: config.DATABASE_URL,
    schema: JOB_SCHEMA,
    // The worker's per-install jobs hold no pg-boss connection while they run (fetch, then settle);
    // a few connections serve fetching, settling and maintenance. The app only enqueues.
    max: poolSize(worker ? "jobEngineWorker" : "jobEngineApp"),
    application_name: PRODUCT.postgresApplicationName(POOLS.jobEngineApp.purpose),
    // `npm run db:migrate` owns the schema (lib/jobs/schema.ts): refuse a schema that is missing or behind.
    migrate: false,
    supervise: worker,
    ...(worker ? { superviseIntervalSeconds: supervisePassSeconds(), monitorIntervalSeconds: supervisePassSeconds() } : {}),
    schedule: worker,
    registerInstance: worker,
    ...(worker ? { instanceName: "worker" } : {}),
  });
  boss.on("error", (error) => logger.error({ err: error }, "job engine error"));
  boss.on("warning", (warning) => logger.warn({ warning: warning.data }, `job engine: ${warning.message}`));
  try {
    await boss.start();
  } catch (error) {
    await boss.stop({ graceful: false }).catch(() => undefined);
    throw new Error(`the job engine could not start (has \`npm run db:migrate\` run?): ${error instanceof Error ? error.message : String(error)}`);
  }
  const database = boss.getDb();
  reportOpenConnections(worker ? "jobEngineWorker" : "jobEngineApp", () => database.poolCounts?.()?.total ?? 0);
  return boss;
}

/** Stops the process's engine, if it was started: lets jobs in hand finish for up to `timeoutMs`. */
export async function stopJobEngine(timeoutMs: number): Promise<void> {
  const current = globalWithEngine[ENGINE_KEY];
  if (!current) return;
  const boss = await current.started.catch(() => undefined);
  await boss?.stop({ graceful: true, timeout: timeoutMs });
}

// ----- enqueueing --------------------------------------------------------------------------------

/** A per-install job as a webhook handler asks for it: recorded in the delivery's own transaction. */
export type FollowUp = { kind: "install-check"; installRowId: string };

/** pg-boss's view of a follow-up: keyed per install, ahead of the sweep's jobs (priority 1). */
function followUpJob(followUp: FollowUp): { queue: string; data: InstallJobData; options: SendOptions } {
  return {
    queue: JOB_KINDS.reconcile.installQueue,
    data: { installRowId: followUp.installRowId, cause: "webhook" },
    options: { singletonKey: followUp.installRowId, priority: 1, ...expiryOf("reconcile") },
  };
}

/**
 * Enqueues a follow-up inside the caller's Prisma transaction (pg-boss's `db` option): the job
 * commits with the delivery that asked for it, or not at all. If the install already has a check
 * waiting, nothing is added (stately): that check does the same work.
 */
export async function enqueueFollowUp(tx: Tx, followUp: FollowUp): Promise<void> {
  const boss = await jobEngine();
  const { queue, data, options } = followUpJob(followUp);
  // fromPrisma wants the transaction client; Tx is that client minus the methods it does not use.
  await boss.send(queue, data, { ...options, db: fromPrisma(tx as Parameters<typeof fromPrisma>[0]) });
}

/**
 * Enqueues a follow-up on its own, for a webhook recorded by one statement that has already
 * committed (lib/webhooks/receive.ts). The same job as enqueueFollowUp's; not atomic with the
 * delivery, so the statement that asks for it must make the work durable itself (see FastPathResult
 * in lib/webhooks/handler.ts). An install with a check already waiting gets no second one.
 */
export async function enqueueFollowUpAfterCommit(followUp: FollowUp): Promise<void> {
  const boss = await jobEngine();
  const { queue, data, options } = followUpJob(followUp);
  await boss.send(queue, data, options);
}

/**
 * A follow-up as pg-boss's own statement, for a database function to run in the very statement that
 * records the delivery (a re-consent's check in one round trip: webhook_install_created_with_check,
 * migration 20261202050000). `sql` takes one text parameter, `param` with the install's row id
 * written as `placeholder`, which the function replaces.
 */
export type FollowUpStatement = { sql: string; param: string; placeholder: string };

const INSTALL_ROW_ID_PLACEHOLDER = "{install-row-id}";
let followUpStatementMade: { statement?: FollowUpStatement; making?: Promise<void> } = {};

/**
 * pg-boss's insert of an install-check follow-up, once makeFollowUpStatement() has made it.
 *
 * Made by pg-boss itself: `send` given a `db` that keeps the statement instead of running it (the
 * `db` option is pg-boss's way to run its statements on another connection). So the text follows
 * pg-boss's layout (tables, partitions, per-queue defaults) as pg-boss reads it at the time. Made
 * once, not per delivery: the job carries nothing else that varies (this engine propagates no trace
 * context), and pg-boss's telemetry counts each `send` as a message sent, so it counts one too many
 * per process.
 */
export function followUpStatement(): FollowUpStatement | undefined {
  return followUpStatementMade.statement;
}

/**
 * Makes the statement followUpStatement() returns, in the background: called when a delivery needed
 * it and had none, or had one that `failed` (made afresh, as pg-boss reads its layout now). Not
 * before: a process that only ever records first installs never starts its job engine, and a
 * delivery never waits for it to start.
 */
export function makeFollowUpStatement(failed?: FollowUpStatement): void {
  const { statement, making: underWay } = followUpStatementMade;
  if (underWay || (statement && statement !== failed)) return;
  const making = (async () => {
    const boss = await jobEngine();
    const { queue, data, options } = followUpJob({ kind: "install-check", installRowId: INSTALL_ROW_ID_PLACEHOLDER });
    let kept: { text: string; values?: unknown[] } | undefined;
    const keep = { executeSql: async (text: string, values?: unknown[]) => ((kept = { text, values }), { rows: [] }) };
    await boss.send(queue, data, { ...options, db: keep });
    const param = kept?.values?.[0];
    if (!kept || kept.values?.length !== 1 || typeof param !== "string" || !param.includes(INSTALL_ROW_ID_PLACEHOLDER)) {
      throw new Error("pg-boss's insert of a job did not take the one JSON parameter it used to");
    }
    followUpStatementMade = { statement: { sql: kept.text, param, placeholder: INSTALL_ROW_ID_PLACEHOLDER } };
  })().catch((error: unknown) => {
    logger.warn({ err: error }, "a re-consent's check is enqueued after its delivery's statement: its insert could not be made in advance");
    followUpStatementMade = {};
  });
  followUpStatementMade = { making };
}

/**
 * A new install's first sync, right after its callback. Not in the callback's transaction: the
 * authorization code is spent by then, so a job engine that is away must not fail the install; the
 * scheduled sync picks the install up within minutes anyway (lib/jobs/kinds.ts).
 */
export async function enqueueFirstSync(installRowId: string): Promise<void> {
  const boss = await jobEngine();
  await boss.send(JOB_KINDS.sync.installQueue, { installRowId, cause: "install" } satisfies InstallJobData, { singletonKey: installRowId, ...expiryOf("sync") });
}

export type SyncNowOutcome = { outcome: "queued" } | { outcome: "already_queued" | "running"; since: Date };

/**
 * "Sync now" from the staff console: the install's sync job, for the worker to run, unless one is
 * already queued or running for it (then nothing is added, and the caller says which, and since
 * when). The queue's stately policy alone would queue a second run behind a running one; staff
 * asking twice want one run, so a running job counts too. Inside the caller's transaction (`tx`),
 * so the job and the audit line commit together. A fan-out racing this adds nothing either: the
 * insert skips a second waiting job (send answers null).
 */
export async function enqueueSyncNow(tx: Tx, installRowId: string): Promise<SyncNowOutcome> {
  const boss = await jobEngine();
  const connection = { db: fromPrisma(tx as Parameters<typeof fromPrisma>[0]) };
  const jobs = await boss.findJobs(JOB_KINDS.sync.installQueue, { key: installRowId, ...connection });
  const waiting = jobs.find((job) => job.state === "created" || job.state === "retry");
  if (waiting) return { outcome: "already_queued", since: waiting.createdOn };
  const running = jobs.find((job) => job.state === "active");
  if (running) return { outcome: "running", since: running.startedOn ?? running.createdOn };
  const id = await boss.send(JOB_KINDS.sync.installQueue, { installRowId, cause: "staff" } satisfies InstallJobData, {
    singletonKey: installRowId,
    // Ahead of the scheduled runs, as a webhook follow-up is: someone is waiting for this one.
    priority: 1,
    ...expiryOf("sync"),
    ...connection,
  });
  return id ? { outcome: "queued" } : { outcome: "already_queued", since: new Date() };
}
