// How long each table of the app's schema keeps its rows, in one place: what is kept, for how long,
// why, the setting that changes it, and what deletes the rows. docs/data-retention.md is the same list
// in words. A table with no rule fails tests/unit/retention-rules.test.ts, which reads every model of
// prisma/schema.prisma: adding a table means deciding here how long its rows live.
//
// The tables of synced resources get their rule from the registry (lib/sync/resources.ts), as the
// install purge gets its list: `npm run new:resource` adds a table and its registry line, and the
// table is covered with nothing more to write.
//
// Four kinds of rule:
//   - window: the history purge (./purge.ts) deletes rows older than a window, in batches, on the
//     retention job's schedule (lib/jobs/kinds.ts). Optionally each group's newest row is kept
//     whatever its age (`keepNewestPer`), for what reads "the latest" (the console's sync health);
//   - install-data: an uninstalled or lost install's synced data, deleted SYNC_RETENTION_DAYS after the
//     uninstall or loss (lib/sync/retention.ts, its tables from the registry lib/sync/resources.ts);
//   - pruned: the code that writes the table deletes its expired rows itself (named in `where`);
//   - with-parent: the rows belong to a row of a `window` table and go with it (ON DELETE CASCADE);
//   - bounded: one row per install, per client or per rule, never more: nothing to purge.
//
// Table and column names are constants of this file, never input, so the purge interpolates them as
// identifiers.
import "server-only";
import { SYNCED_RESOURCES } from "@/lib/sync/resources";

/** A table's window, read from its setting when the purge runs (lib/env/retention.ts). */
export type WindowSetting = "SYNC_RUN_RETENTION_DAYS" | "REFRESH_ATTEMPT_RETENTION_DAYS" | "WEBHOOK_DELIVERY_RETENTION_DAYS" | "AUDIT_RETENTION_DAYS";

export type WindowPurge = {
  kind: "window";
  /** The setting that holds the window, in days. */
  setting: WindowSetting;
  /** The row's time: the purge walks the index (timeColumn, idColumn) oldest first. */
  timeColumn: string;
  /** The primary key's single column, the walk's tie-break. */
  idColumn: string;
  /** Its type in the database, for the walk's cursor: a uuid, or a sequence (BigInt in the schema). */
  idType: "uuid" | "bigint";
  /**
   * A condition on the row itself (`d`) that must hold, besides its age, for it to go: rows past the
   * window without it stay (an alert digest still waiting for its installs to recover).
   */
  onlyWhere?: string;
  /**
   * At most this many rows per statement, below RETENTION_BATCH_ROWS, when each row deleted takes its
   * `with-parent` rows along: the statement's size is then the rows and everything they cascade to.
   */
  maxBatchRows?: number;
  /**
   * Rows of one group (these columns) are deleted only when a newer row of the group has `newerWhere`
   * (a condition on that newer row, `n`): the group's newest such row stays whatever its age.
   * Checked through an index that starts with the group's columns and ends with the time column.
   */
  keepNewestPer?: { columns: readonly string[]; newerWhere?: string };
};

export type RetentionRule = {
  /** What is kept, for how long, in a sentence. */
  kept: string;
  /** Why that long: the dedupe window, support, audit duty, the contract. */
  why: string;
  /** The setting that changes it (lib/env/), or null when only code changes it. */
  setting: string | null;
  purge:
    | WindowPurge
    | { kind: "install-data" }
    | { kind: "pruned"; where: string }
    | { kind: "with-parent"; parent: string }
    | { kind: "bounded" };
};

/**
 * Every table of prisma/schema.prisma, by its name in the database.
 *
 * A table another change adds gets its rule here, and a row in docs/data-retention.md; if it grows
 * with time, a `window` rule and an index on (time, id).
 */
export const RETENTION_RULES = {
  // ----- operational history: a window, plus what the console needs --------------------------------
  sync_runs: {
    kept: "Each sync run of each resource where something happened (a failure, a stop, a change of data or of outcome; a quiet run keeps no row, lib/sync/history.ts), SYNC_RUN_RETENTION_DAYS (14); each install's latest finished run per resource, and any run newer than it, whatever their age.",
    why:
      "Support reads what the sync did in the last days (the install's timeline reads 7). The console's sync health, the dashboard's freshness and the sync's due query read sync_latest and the runs still going. Without the quiet runs, about a tenth of one row per resource per run, every SYNC_INTERVAL_MINUTES: still the largest history.",
    setting: "SYNC_RUN_RETENTION_DAYS",
    purge: {
      kind: "window",
      setting: "SYNC_RUN_RETENTION_DAYS",
      timeColumn: "started_at",
      idColumn: "id",
      idType: "uuid",
      // A run is deleted only once a newer *finished* run of the same install and resource exists, so
      // the dashboard's freshness (lib/dashboard/freshness.ts) never loses its row, and a run still
      // going is never deleted under it. Index (install_row_id, started_at).
      keepNewestPer: { columns: ["install_row_id", "resource"], newerWhere: "n.outcome <> 'running'" },
    },
  },
  sync_days: {
    kept: "Each install's sync runs counted per resource and UTC day (runs, quiet runs, failures, records changed), SYNC_RUN_RETENTION_DAYS (14).",
    why: "The install's timeline shows the quiet runs that keep no sync_runs row as one line per resource and day; the same window as the runs it stands for. One row per install, resource and day.",
    setting: "SYNC_RUN_RETENTION_DAYS",
    purge: { kind: "window", setting: "SYNC_RUN_RETENTION_DAYS", timeColumn: "day", idColumn: "id", idType: "uuid" },
  },
  refresh_attempts: {
    kept: "Each attempt of the refresh coordinator (lib/oauth/refresh.ts), REFRESH_ATTEMPT_RETENTION_DAYS (14); each install's latest attempt whatever its age.",
    why:
      "Support reads an install's refreshes beside its syncs in the console's timeline (lib/admin/timeline.ts): the same two weeks as the sync runs. The latest attempt says how the install's token chain stands, or how it ended (a refused refresh before a re-install): one row per install, kept. About one row per active install a day: the hourly refreshes (the 1-hour access token, contract §3) are routine successes that fold into one row (docs/spec-gaps.md A146, A196).",
    setting: "REFRESH_ATTEMPT_RETENTION_DAYS",
    purge: {
      kind: "window",
      setting: "REFRESH_ATTEMPT_RETENTION_DAYS",
      timeColumn: "attempted_at",
      idColumn: "id",
      idType: "bigint",
      // An attempt is written after its outcome is known; only the install's latest row is updated
      // (a routine success folded into it), so a newer attempt of the same install makes an old one deletable. Index (install_row_id, attempted_at DESC).
      keepNewestPer: { columns: ["install_row_id"] },
    },
  },
  webhook_deliveries: {
    kept: "Each recorded delivery (dedupe key, outcome, payload), WEBHOOK_DELIVERY_RETENTION_DAYS (30) after it was received.",
    why:
      "Dedupe (contract §6, docs/spec-gaps.md A7) needs a delivery's record while a copy of it can be accepted: a duplicate only inside the freshness window (WEBHOOK_TOLERANCE_SECONDS, at most an hour), a replay the service sends on request (§5.7) whenever the partner asks for one. 30 days covers the replays a partner asks for after an outage; the console's webhook log reads the same rows.",
    setting: "WEBHOOK_DELIVERY_RETENTION_DAYS",
    purge: { kind: "window", setting: "WEBHOOK_DELIVERY_RETENTION_DAYS", timeColumn: "received_at", idColumn: "id", idType: "uuid" },
  },
  // ----- the audit logs: a longer window ------------------------------------------------------------
  install_events: {
    kept: "Each status change of each install, AUDIT_RETENTION_DAYS (400); each install's latest change whatever its age.",
    why:
      "The history staff read to answer \"why is this install revoked\", and your audit duty; a year and a month so a yearly review finds the whole year. The latest change says how the install got to the state it is in now.",
    setting: "AUDIT_RETENTION_DAYS",
    purge: { kind: "window", setting: "AUDIT_RETENTION_DAYS", timeColumn: "occurred_at", idColumn: "id", idType: "uuid", keepNewestPer: { columns: ["install_row_id"] } },
  },
  staff_actions: {
    kept: "Each action staff attempted in the console, AUDIT_RETENTION_DAYS (400) after it was asked for.",
    why: "The console's audit log (who did what to which install), your audit duty: the same window as the install history.",
    setting: "AUDIT_RETENTION_DAYS",
    purge: { kind: "window", setting: "AUDIT_RETENTION_DAYS", timeColumn: "requested_at", idColumn: "id", idType: "uuid" },
  },
  alert_digests: {
    kept: "Each alert-storm window (lib/alerts/digest.ts), AUDIT_RETENTION_DAYS (400) after its last alert, once it is over: a window that never fired, or a digest whose held installs have all recovered. A fired digest still waiting for installs to recover stays whatever its age.",
    why:
      "A fired digest is the record of an incident that hit many installs at once (which type, how many, when, how long until every install recovered): a yearly review reads it beside the audit logs, so the same window. An open one is still in use: each held install's recovery is counted against it (docs/spec-gaps.md A119). One row per alert type per quiet spell, and its members: small, but it grows with every alert (docs/spec-gaps.md A147).",
    setting: "AUDIT_RETENTION_DAYS",
    purge: {
      kind: "window",
      setting: "AUDIT_RETENTION_DAYS",
      timeColumn: "last_alert_at",
      idColumn: "id",
      idType: "uuid",
      // Over: never fired (its alerts were each sent alone and resolve alone), or closed (every held
      // install resolved). Neither is ever the current window again, nor touched by a recovery.
      onlyWhere: "(d.fired_at IS NULL OR d.closed_at IS NOT NULL)",
      // Each digest takes its members along (alert_digest_members): up to ALERT_DIGEST_THRESHOLD of
      // them in a window that never fired, every install of the storm in a fired one.
      maxBatchRows: 200,
    },
  },
  alert_digest_members: {
    kept: "As long as its digest (alert_digests).",
    why: "Which installs a digest counted, held or alone, and when each recovered: part of the digest, meaningless without it.",
    setting: "AUDIT_RETENTION_DAYS",
    purge: { kind: "with-parent", parent: "alert_digests" },
  },
  // ----- an uninstalled operator's synced data (lib/sync/retention.ts) ------------------------------
  // Each synced resource's table too: SYNCED_DATA_RULE below, one per entry of the registry.
  sync_checkpoints: {
    kept: "One row per install and resource, while the install's synced data is kept.",
    why: "Where the sync of each resource stands; nothing to resume once the data is gone.",
    setting: "SYNC_RETENTION_DAYS",
    purge: { kind: "install-data" },
  },
  // ----- pruned by the code that writes them ----------------------------------------------------------
  webhook_rejections: {
    kept: "Counts of refused deliveries per minute and reason, 30 days.",
    why: "Nothing the sender wrote is stored; a month of counts shows an attack or a misconfigured secret (docs/spec-gaps.md A97).",
    setting: null,
    purge: { kind: "pruned", where: "lib/webhooks/rejections.ts" },
  },
  sessions: {
    kept: "Each sign-in, until a day after its absolute lifetime (SESSION_ABSOLUTE_LIFETIME_SECONDS).",
    why: "A session row is checked on every request; an ended one only proves a sign-out.",
    setting: "SESSION_ABSOLUTE_LIFETIME_SECONDS",
    purge: { kind: "pruned", where: "lib/auth/sessions.ts" },
  },
  pending_sign_ins: {
    kept: "A few minutes, until it expires or is used.",
    why: "It holds a switch of session the person has not chosen yet.",
    setting: null,
    purge: { kind: "pruned", where: "lib/auth/pending-sign-in.ts" },
  },
  authorization_code_claims: {
    kept: "An hour; a claim of a live install's code while the install lives.",
    why: "A code is redeemed once (contract §2); after an hour the identity provider refuses it anyway.",
    setting: null,
    purge: { kind: "pruned", where: "lib/installs/code-claims.ts" },
  },
  rate_limits: {
    kept: "A counter until an hour after its window ends.",
    why: "rate-limiter-flexible deletes expired counters itself every 5 minutes (lib/rate-limit.ts).",
    setting: null,
    purge: { kind: "pruned", where: "lib/rate-limit.ts" },
  },
  // ----- bounded: one row per install, client or rule -------------------------------------------------
  installs: {
    kept: "Every install, revoked ones too, for the life of the app.",
    why: "Identifiers and states, no operator data: a revoked row answers a late webhook, a support question, a re-install; one row per install ever made.",
    setting: null,
    purge: { kind: "bounded" },
  },
  token_grants: {
    kept: "One row per install, while it holds tokens; deleted when the install is revoked or needs a re-install.",
    why: "The tokens are the operator's consent (contract §3); nothing may keep them after it ends (lib/installs/state.ts).",
    setting: null,
    purge: { kind: "bounded" },
  },
  sync_latest: {
    kept: "One row per install and resource: its latest finished sync run's outcome, while the install row exists.",
    why: "The console's sync health and its \"sync failing\" filter read it through one index at any number of installs (docs/spec-gaps.md A155), whatever sync_runs keeps. Overwritten by each run, never more rows than installs times resources.",
    setting: null,
    purge: { kind: "bounded" },
  },
  api_budgets: {
    kept: "One row per install.",
    why: "The install's share of the rate limit (contract §8), taken on every request.",
    setting: null,
    purge: { kind: "bounded" },
  },
  alert_incidents: {
    kept: "One row per client and per install that ever had a sync failing.",
    why: "Pairs a trouble's alert with its recovery (lib/alerts/incidents.ts).",
    setting: null,
    purge: { kind: "bounded" },
  },
  issuer_facts: {
    kept: "One row per identity provider issuer.",
    why: "Whether the settle probe of a lost refresh answer is proof there (A186).",
    setting: null,
    purge: { kind: "bounded" },
  },
  oauth_client_health: {
    kept: "One row per client_id.",
    why: "The token endpoint's circuit (contract §7).",
    setting: null,
    purge: { kind: "bounded" },
  },
  retention_purges: {
    kept: "One row per window rule: its last run.",
    why: "The console's \"last purge\" line.",
    setting: null,
    purge: { kind: "bounded" },
  },
} as const satisfies Record<string, RetentionRule>;

export type RetainedTable = keyof typeof RETENTION_RULES;

/** The rule of every synced resource's table (synced_charge_points, synced_charges, synced_teams...). */
export const SYNCED_DATA_RULE: RetentionRule = {
  kept: "While the install is live; SYNC_RETENTION_DAYS (30) after the uninstall, or after the app lost it (A209).",
  why: "The operator's own data: your product reads it while they use the app, and the window after an uninstall covers a mistake, a dispute, an export.",
  setting: "SYNC_RETENTION_DAYS",
  purge: { kind: "install-data" },
};

/** Every table's rule, by table: the list above, and each registered synced resource's table. */
export function retentionRules(): Record<string, RetentionRule> {
  return { ...Object.fromEntries(SYNCED_RESOURCES.map((resource) => [resource.table, SYNCED_DATA_RULE])), ...RETENTION_RULES };
}

/** The tables the history purge walks, with their window rule. */
export function windowRules(): { table: RetainedTable; rule: WindowPurge }[] {
  return (Object.entries(RETENTION_RULES) as [RetainedTable, RetentionRule][]).flatMap(([table, rule]) => (rule.purge.kind === "window" ? [{ table, rule: rule.purge }] : []));
}
