// What an alert is: one JSON document with a stable, documented shape (docs/operations.md "Alerts"),
// built here and nowhere else, so no caller can put a token or a secret into one.
//
// Every alert belongs to an incident (`incident`, e.g. `install:<row id>`): a trouble alert opens it
// (`status: "firing"`) and its recovery closes it (`status: "resolved"`), so an incident tool can pair
// them (PagerDuty's dedup_key, Opsgenie's alias, Alertmanager's fingerprint). The `id` is the Standard
// Webhooks `webhook-id`: the same for every delivery attempt of one alert, so a receiver can drop a
// retry it already took.
//
//   type                      status    when
//   install.needs_reauth      firing    an install moved to NEEDS_REAUTH (contract §7: 403 NEEDS_REAUTH)
//   install.reinstall_needed  firing    an install moved to REINSTALL_NEEDED (its refresh chain is gone)
//   install.reconnect_needed  firing    a refresh's answer was lost where nothing proves it never happened: the
//                                       install serves on its last access token until the operator reconnects (A185)
//   install.recovered         resolved  a flagged install is ACTIVE again (re-consent, or a new chain)
//   install.revoked           resolved  a flagged install was uninstalled or replaced: nothing left to do
//   client.circuit_open       firing    invalid_client opened the token circuit (contract §7)
//   client.circuit_closed     resolved  a token request succeeded again after that
//   sync.failing              firing    ALERT_SYNC_FAILURES sync runs of an install failed in a row
//   sync.recovered            resolved  a sync run of that install completed after the alert, or it was uninstalled
//   clock.skewed              firing    this host's clock is at least half the webhook window off the service's
//                                       (its Date headers, lib/partner-api/service-clock.ts)
//   clock.recovered           resolved  it agrees again (within a quarter of the window)
//   digest.firing             firing    more than ALERT_DIGEST_THRESHOLD installs entered one of the three
//                                       per-install troubles within the window: their alerts are held (digest.ts)
//   digest.recovered          resolved  every install that digest held has recovered
import "server-only";
import { randomUUID } from "node:crypto";
import { z } from "zod";

export const ALERT_TYPES = [
  "install.needs_reauth",
  "install.reinstall_needed",
  "install.reconnect_needed",
  "install.recovered",
  "install.revoked",
  "client.circuit_open",
  "client.circuit_closed",
  "sync.failing",
  "sync.recovered",
  "clock.skewed",
  "clock.recovered",
  "digest.firing",
  "digest.recovered",
] as const;

export type AlertType = (typeof ALERT_TYPES)[number];

const RESOLVING: ReadonlySet<AlertType> = new Set(["install.recovered", "install.revoked", "client.circuit_closed", "sync.recovered", "clock.recovered", "digest.recovered"]);

/** The install an alert is about: ids and names only (never its tokens, its config or its data). */
const AlertInstallSchema = z.object({
  /** The app's row id: the console's address for the install. */
  rowId: z.uuid(),
  /** contract §2: the service's install_id; null while the app has not learned it. */
  installId: z.number().int().nullable(),
  operatorId: z.string(),
  /** As the service stated it (null when it never did: the summary says "operator <id>"). */
  operatorName: z.string().nullable(),
});

/**
 * The alert as it is sent (ALERT_WEBHOOK_FORMAT=standard), and as the delivery job carries it: the
 * job's data is read back from the database, so it is parsed again before it is sent.
 */
export const AlertSchema = z.object({
  /** `alert_<uuid>`; also the `webhook-id` header. */
  id: z.string().regex(/^alert_[0-9a-f-]{36}$/),
  type: z.enum(ALERT_TYPES),
  status: z.enum(["firing", "resolved"]),
  /** Pairs a firing alert with the alert that resolves it. */
  incident: z.string().min(1).max(200),
  /** When the state changed (ISO 8601, UTC); the `webhook-timestamp` header is when it was sent. */
  occurredAt: z.iso.datetime(),
  /** One line for people, usable as-is as Slack text. */
  summary: z.string().min(1).max(500),
  install: AlertInstallSchema.nullable(),
  /** The OAuth client, for client.* alerts. */
  clientId: z.string().nullable(),
  /** Machine-readable particulars: statuses, cause, failure counts, the failure's kind. Never free text from outside. */
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  /** The staff console's page for the install (or the console, for client alerts), from APP_URL. */
  consoleUrl: z.url(),
});

export type Alert = z.infer<typeof AlertSchema>;
export type AlertInstall = z.infer<typeof AlertInstallSchema>;

/** What a caller says about an alert; the rest (id, status, time, link) is filled in by buildAlert. */
export type AlertDraft = {
  type: AlertType;
  incident: string;
  summary: string;
  install?: AlertInstall | null;
  clientId?: string | null;
  details?: Alert["details"];
};

export function buildAlert(draft: AlertDraft, appUrl: string, now = new Date()): Alert {
  const consolePath = draft.install ? `/admin/installs/${draft.install.rowId}` : "/admin";
  return AlertSchema.parse({
    id: `alert_${randomUUID()}`,
    type: draft.type,
    status: RESOLVING.has(draft.type) ? "resolved" : "firing",
    incident: draft.incident,
    occurredAt: now.toISOString(),
    summary: draft.summary.slice(0, 500),
    install: draft.install ?? null,
    clientId: draft.clientId ?? null,
    details: draft.details ?? {},
    consoleUrl: new URL(consolePath, appUrl).toString(),
  });
}

/** "Nordic Charging (operator 1001, install 42)": how summaries name an install. */
export function describeInstall(install: AlertInstall): string {
  const name = install.operatorName ?? `Operator ${install.operatorId}`;
  const ids = [`operator ${install.operatorId}`, install.installId === null ? null : `install ${install.installId}`].filter(Boolean).join(", ");
  return `${name} (${ids})`;
}

/**
 * The body for ALERT_WEBHOOK_FORMAT=slack: a Slack incoming webhook shows the message's `text` (or
 * `blocks`), not the alert's own fields, so the alert becomes one mrkdwn line with the console link
 * (`<url|label>` is Slack's link syntax; `&`, `<` and `>` are escaped as Slack asks).
 */
export function slackBody(alert: Alert): { text: string } {
  const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const mark = alert.status === "firing" ? ":rotating_light:" : ":white_check_mark:";
  return { text: `${mark} ${escape(alert.summary)} <${alert.consoleUrl}|Open in the console>` };
}
