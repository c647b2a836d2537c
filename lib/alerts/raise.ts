// Raising an alert: a delivery job enqueued inside the transaction that changes the state it reports.
//
// The job commits with the state change or not at all: a process that dies right after the commit
// still has its alert delivered (by any worker), and a change that rolls back sends nothing. The
// delivery itself happens later, in a worker (lib/alerts/deliver.ts), so a slow or absent receiver
// never holds up the request, refresh or sync that changed the state.
import "server-only";
import { fromPrisma } from "pg-boss";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
// The sending half of the job engine only: the half that runs jobs imports the install state
// machine, which raises alerts (lib/jobs/enqueue.ts says why the two are apart).
import { jobEngine } from "@/lib/jobs/enqueue";
import { ALERT_QUEUES } from "@/lib/jobs/queues";
import { logger } from "@/lib/log";
import { buildAlert, type AlertDraft } from "./alert";

/** What an alert delivery job carries: the whole alert, fixed when it was raised (its id, its time). */
export type AlertJobData = { alert: ReturnType<typeof buildAlert> };

export function alertsEnabled(): boolean {
  return env().ALERT_WEBHOOK_URL !== undefined;
}

/**
 * Enqueues the alert in `tx`. With alerts off (ALERT_WEBHOOK_URL unset), logs it instead. If the job
 * engine cannot start, the state change still goes ahead without its alert (logged as an error):
 * an alert must never stop an install from being flagged or a circuit from opening.
 */
export async function raiseAlert(tx: Tx, draft: AlertDraft): Promise<void> {
  const alert = buildAlert(draft, env().APP_URL);
  const fields = { alert: alert.type, incident: alert.incident, alertId: alert.id };
  if (!alertsEnabled()) {
    logger.warn(fields, `alert (not sent: ALERT_WEBHOOK_URL is unset): ${alert.summary}`);
    return;
  }
  const boss = await jobEngine().catch((error: unknown) => {
    logger.error({ ...fields, err: error }, `alert not queued (the job engine is unavailable): ${alert.summary}`);
    return null;
  });
  if (!boss) return;
  // fromPrisma wants the transaction client; Tx is that client minus the methods it does not use.
  // Keyed by the incident: its alerts are delivered one after the other, in order (lib/jobs/queues.ts).
  await boss.send(ALERT_QUEUES.delivery, { alert } satisfies AlertJobData, { singletonKey: alert.incident, db: fromPrisma(tx as Parameters<typeof fromPrisma>[0]) });
  logger.info(fields, `alert queued: ${alert.summary}`);
}
