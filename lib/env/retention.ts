// How long the app keeps its own history (docs/data-retention.md; the rules in lib/retention/rules.ts).
// An uninstalled operator's synced data has its own setting, SYNC_RETENTION_DAYS (./sync.ts).
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";

export const retentionShape = {
  /**
   * Days of sync runs kept (sync_runs): support reads "what did the sync do last week". Each install's
   * latest finished run per resource is kept whatever its age (the console's sync health reads it).
   * At least a day: the due query and the console's timeline read the last day's and week's runs.
   */
  SYNC_RUN_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(14),
  /**
   * Days of the refresh history kept (refresh_attempts: every attempt of lib/oauth/refresh.ts). The
   * same two weeks as the sync runs, so an install's timeline shows its refreshes and its syncs over
   * the same days; each install's latest attempt is kept whatever its age (why its chain ended, when
   * it did). At least a day: support reads the last day's attempts of an install in trouble.
   */
  REFRESH_ATTEMPT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(14),
  /**
   * Days webhook deliveries are kept (webhook_deliveries: the dedupe record and the console's webhook
   * log). At least a day, far above the freshness window (WEBHOOK_TOLERANCE_SECONDS, at most an hour)
   * in which a copy of a delivery can be accepted (contract §6; docs/spec-gaps.md A6, A7, A143).
   */
  WEBHOOK_DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * Days the audit logs are kept: staff actions (staff_actions) and install status changes
   * (install_events; each install's latest change is kept whatever its age), and the record of alert
   * storms (alert_digests, once a digest is over). A year and a month by default, so a yearly review
   * always finds the whole previous year.
   */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(30).max(3650).default(400),
  /** Rows per DELETE statement of the history purge (lib/retention/purge.ts): each its own short transaction. */
  RETENTION_BATCH_ROWS: z.coerce.number().int().min(100).max(50_000).default(5_000),
};
