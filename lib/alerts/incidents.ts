// When an alert fires: one alert per change of state, never one per failed call or per retry.
//
//   - an install: on the transitions of its status (lib/installs/state.ts calls alertOnTransition in
//     the transition's transaction, under the row lock that makes the transition happen once). The
//     status is the deduplication: a second 403 NEEDS_REAUTH finds the install already flagged, moves
//     nothing and raises nothing.
//   - the client's token circuit and an install's sync: an incident row (alert_incidents), opened and
//     closed under its row lock with the alert in the same transaction. The circuit's incident stays
//     open until a token request succeeds, however many times invalid_client is answered meanwhile
//     (a new secret that is wrong too re-opens nothing). A sync incident opens after
//     ALERT_SYNC_FAILURES failed runs in a row and closes when a run completes; the count starts from
//     zero after every completed run, so a sync that fails every other run never alerts. An uninstall
//     closes an open sync incident (no run will ever complete again).
//
// A flapping install (flagged, re-consented, flagged again) alerts on each move: every one is a real
// change that needed (or ended the need for) an operator's action, and none happens without one.
//
// Every per-install alert goes out through digest.ts: when many installs enter the same trouble at
// once (an outage of the identity provider, of the service), their alerts are folded into one digest.
// The incidents here (statuses, alert_incidents rows) open and close per install all the same.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { db } from "@/lib/db/client";
import type { InstallStatus } from "@/lib/db/generated/enums";
import { env } from "@/lib/env";
import { describeInstall, type AlertDraft, type AlertInstall } from "./alert";
import { raiseInstallAlert, type InstallAlertDraft } from "./digest";
import { raiseAlert } from "./raise";

type InstallAlertType = "install.needs_reauth" | "install.reinstall_needed" | "install.recovered" | "install.revoked";

const TROUBLE: ReadonlySet<InstallStatus> = new Set(["NEEDS_REAUTH", "REINSTALL_NEEDED"]);

/** Which alert an install's move from `from` to `to` raises, if any. */
export function alertTypeForTransition(from: InstallStatus, to: InstallStatus): InstallAlertType | null {
  if (to === "NEEDS_REAUTH") return "install.needs_reauth";
  if (to === "REINSTALL_NEEDED") return "install.reinstall_needed";
  if (TROUBLE.has(from) && to === "ACTIVE") return "install.recovered";
  // An uninstall of a healthy install is the operator's choice, not trouble: only a flagged one's closes its incident.
  if (TROUBLE.has(from) && to === "REVOKED") return "install.revoked";
  return null;
}

async function readAlertInstall(tx: Tx, installRowId: string): Promise<AlertInstall | null> {
  const install = await tx.install.findUnique({ where: { id: installRowId }, select: { id: true, installId: true, operatorId: true, operatorName: true } });
  return install && { rowId: install.id, installId: install.installId, operatorId: install.operatorId, operatorName: install.operatorName };
}

function installSummary(type: InstallAlertType, who: string, lostRefreshAnswer = false): string {
  switch (type) {
    case "install.needs_reauth":
      return `${who} needs re-authorization (403 NEEDS_REAUTH): the app stops calling the API for it until the operator approves the app's access again.`;
    case "install.reinstall_needed":
      return lostRefreshAnswer
        ? `${who} needs a re-install: a refresh's answer was lost, so its refresh chain is gone here; the operator reconnecting from the portal brings the same install back.`
        : `${who} needs a re-install: its refresh chain is gone, and only the operator installing the app again brings it back.`;
    case "install.recovered":
      return `${who} recovered: the install is active again.`;
    case "install.revoked":
      return `${who} was uninstalled or replaced by a new install while it needed attention: nothing is left to do for it.`;
  }
}

/**
 * Called by transitionInstall inside its transaction, after the move was written. `lostRefreshAnswer`:
 * the move is a refresh's lost answer (REFRESH_ANSWER_LOST), folded per incident (digest.ts).
 */
export async function alertOnTransition(tx: Tx, installRowId: string, from: InstallStatus, to: InstallStatus, cause: string, lostRefreshAnswer = false): Promise<void> {
  // An uninstalled install is never synced again: a sync incident it left open would never close.
  if (to === "REVOKED") await closeSyncIncidentOfRevokedInstall(tx, installRowId);
  const type = alertTypeForTransition(from, to);
  if (!type) return;
  const install = await readAlertInstall(tx, installRowId);
  if (!install) return;
  await raiseInstallAlert(tx, {
    type,
    incident: `install:${installRowId}`,
    summary: installSummary(type, describeInstall(install), lostRefreshAnswer),
    install,
    details: { from, to, cause },
    lostRefreshAnswer: type === "install.reinstall_needed" && lostRefreshAnswer,
  });
}

// ----- a refresh's answer lost where nothing proves it never happened (lib/oauth/refresh.ts, A185) ----

/**
 * The install serves on its last access token until `reconnectBy`, and its refresh token is never sent
 * again: the operator must reconnect from the portal. Raised once per install (the grant's mark is set
 * by compare-and-set in the same transaction); the lost answers of one crash fold into one alert (digest.ts).
 */
export async function alertOnRefreshAnswerLost(tx: Tx, installRowId: string, reconnectBy: Date): Promise<void> {
  const install = await readAlertInstall(tx, installRowId);
  if (!install) return;
  await raiseInstallAlert(tx, {
    type: "install.reconnect_needed",
    incident: `install:${installRowId}`,
    summary:
      `${describeInstall(install)}: a refresh's answer was lost, and this identity provider keeps earlier access tokens valid, so nothing proves the refresh never happened; ` +
      `the app does not send that refresh token again (a reuse would revoke the grant) and serves on the last access token until ${reconnectBy.toISOString()}. The operator must reconnect from the portal before then.`,
    install,
    details: { reconnectBy: reconnectBy.toISOString() },
    lostRefreshAnswer: true,
  });
}

/** The operator reconnected an install that waited for it (A185) and was still ACTIVE: its incident closes. */
export async function alertOnReconnected(tx: Tx, installRowId: string): Promise<void> {
  const install = await readAlertInstall(tx, installRowId);
  if (!install) return;
  await raiseInstallAlert(tx, { type: "install.recovered", incident: `install:${installRowId}`, summary: installSummary("install.recovered", describeInstall(install)), install, details: { cause: "callback" } });
}

// ----- the token circuit (lib/oauth/circuit.ts) ----------------------------------------------------

/** The client's incident key (exported for lib/oauth/circuit.ts, which asks whether it is open in the same statement that closes the circuit). */
export const clientIncident = (clientId: string) => `client:${clientId}`;

/** Opens the incident unless it is open already: true when this call opened it (RETURNING says so). */
async function openIncident(tx: Tx, key: string): Promise<boolean> {
  const now = new Date();
  const opened = await tx.$queryRaw<{ key: string }[]>`
    INSERT INTO alert_incidents (key, open, opened_at, updated_at) VALUES (${key}, true, ${now}, ${now})
    ON CONFLICT (key) DO UPDATE SET open = true, opened_at = EXCLUDED.opened_at, closed_at = NULL, updated_at = EXCLUDED.updated_at
    WHERE NOT alert_incidents.open
    RETURNING key`;
  return opened.length > 0;
}

/** invalid_client opened the circuit: the first time since the last success, one alert. Inside the circuit's transaction. */
export async function alertOnCircuitOpened(tx: Tx, clientId: string): Promise<void> {
  if (!(await openIncident(tx, clientIncident(clientId)))) return;
  await raiseAlert(tx, {
    type: "client.circuit_open",
    incident: clientIncident(clientId),
    summary: `The identity provider refuses the app's client credentials (invalid_client, client ${clientId}): no token is refreshed for any install until OAUTH_CLIENT_SECRET is updated. Ask the service operator to re-issue the client.`,
    clientId,
    details: { error: "invalid_client" },
  });
}

/** A token request succeeded: an open circuit incident closes, with one alert. */
export async function alertOnTokenEndpointAccepted(clientId: string): Promise<void> {
  // One indexed read first, so the usual case (no incident) costs no transaction.
  const incident = await db().alertIncident.findUnique({ where: { key: clientIncident(clientId) }, select: { open: true } });
  if (!incident?.open) return;
  await db().$transaction(async (tx) => {
    const closed = await tx.$queryRaw<{ key: string }[]>`
      UPDATE alert_incidents SET open = false, closed_at = now(), updated_at = now()
      WHERE key = ${clientIncident(clientId)} AND open RETURNING key`;
    if (closed.length === 0) return; // another process closed it first, and raised the alert
    await raiseAlert(tx, {
      type: "client.circuit_closed",
      incident: clientIncident(clientId),
      summary: `The identity provider accepts the app's client credentials again (client ${clientId}): token refreshes go on.`,
      clientId,
      details: {},
    });
  });
}

// ----- an install's sync (lib/sync/index.ts) --------------------------------------------------------

/**
 * An install's sync incident is keyed `sync:<install row id>`. Exported for the one-statement path
 * of install.revoked (lib/webhooks/handlers/install-revoked.ts), which checks in SQL that none is open.
 */
export const SYNC_INCIDENT_PREFIX = "sync:";
const syncIncident = (installRowId: string) => `${SYNC_INCIDENT_PREFIX}${installRowId}`;

/**
 * Failures that do not count toward sync.failing: the client circuit stops every install's sync at
 * once, and client.circuit_open already says so (one alert, not one per install).
 */
const NOT_THE_INSTALLS_FAILURE = new Set(["client_circuit_open"]);

/**
 * Counts a sync run's outcome (lib/sync/index.ts: failed when any resource failed, `reason` naming
 * each, or the run-wide failure's own reason): a failed run adds one to the install's failures in a row, and the
 * ALERT_SYNC_FAILURES-th raises sync.failing; a completed run resets the count and, after an alert,
 * raises sync.recovered. A stopped or skipped run (NEEDS_REAUTH, a 429 it could not wait out, an
 * uninstall) is neither: it leaves the count as it was.
 */
export async function alertOnSyncOutcome(installRowId: string, outcome: "completed" | "stopped" | "skipped" | "failed", reason: string | null): Promise<void> {
  if (outcome === "completed") return closeSyncIncident(installRowId);
  if (outcome !== "failed" || (reason !== null && NOT_THE_INSTALLS_FAILURE.has(reason))) return;
  const key = syncIncident(installRowId);
  const threshold = env().ALERT_SYNC_FAILURES;
  await db().$transaction(async (tx) => {
    const now = new Date();
    const [row] = await tx.$queryRaw<{ failures: number; open: boolean; first_failure_at: Date }[]>`
      INSERT INTO alert_incidents (key, failures, first_failure_at, updated_at) VALUES (${key}, 1, ${now}, ${now})
      ON CONFLICT (key) DO UPDATE SET failures = alert_incidents.failures + 1,
        first_failure_at = COALESCE(alert_incidents.first_failure_at, EXCLUDED.first_failure_at), updated_at = EXCLUDED.updated_at
      RETURNING failures, open, first_failure_at`;
    if (!row || row.open || row.failures < threshold) return;
    await tx.alertIncident.update({ where: { key }, data: { open: true, openedAt: now, closedAt: null } });
    const install = await readAlertInstall(tx, installRowId);
    if (!install) return;
    await raiseInstallAlert(tx, syncDraft("sync.failing", install, {
      consecutiveFailures: row.failures,
      failingSince: row.first_failure_at.toISOString(),
      lastFailure: reason,
    }));
  });
}

async function closeSyncIncident(installRowId: string): Promise<void> {
  const key = syncIncident(installRowId);
  // The usual case: no failure on record, nothing to write.
  const incident = await db().alertIncident.findUnique({ where: { key }, select: { failures: true, open: true } });
  if (!incident || (incident.failures === 0 && !incident.open)) return;
  await db().$transaction(async (tx) => {
    const [before] = await tx.$queryRaw<{ open: boolean; failures: number }[]>`SELECT open, failures FROM alert_incidents WHERE key = ${key} FOR UPDATE`;
    if (!before) return;
    await tx.alertIncident.update({ where: { key }, data: { failures: 0, firstFailureAt: null, open: false, ...(before.open ? { closedAt: new Date() } : {}) } });
    if (!before.open) return; // failures below the threshold were never alerted: nothing to resolve
    const install = await readAlertInstall(tx, installRowId);
    if (install) await raiseInstallAlert(tx, syncDraft("sync.recovered", install, { failedRunsBefore: before.failures }));
  });
}

async function closeSyncIncidentOfRevokedInstall(tx: Tx, installRowId: string): Promise<void> {
  const key = syncIncident(installRowId);
  const [open] = await tx.$queryRaw<{ failures: number }[]>`SELECT failures FROM alert_incidents WHERE key = ${key} AND open FOR UPDATE`;
  if (!open) return;
  await tx.alertIncident.update({ where: { key }, data: { open: false, failures: 0, firstFailureAt: null, closedAt: new Date() } });
  const install = await readAlertInstall(tx, installRowId);
  if (install) await raiseInstallAlert(tx, syncDraft("sync.recovered", install, { failedRunsBefore: open.failures, reason: "revoked" }));
}

function syncDraft(type: "sync.failing" | "sync.recovered", install: AlertInstall, details: AlertDraft["details"]): InstallAlertDraft {
  const who = describeInstall(install);
  const summary =
    type === "sync.failing"
      ? `The sync of ${who} keeps failing: ${String(details?.consecutiveFailures)} runs in a row (last: ${String(details?.lastFailure ?? "unknown")}). Its local copy is getting stale; it resumes from its checkpoint once the cause is gone.`
      : details?.reason === "revoked"
        ? `The sync of ${who} no longer fails: the install was uninstalled, so nothing is left to sync.`
        : `The sync of ${who} recovered: a run completed.`;
  return { type, incident: syncIncident(install.rowId), summary, install, details };
}

// ----- the app's clock against the service's (lib/partner-api/service-clock.ts) --------------------

/**
 * A clock is a machine's, so the incident is the host's: every process on it shares one (the web
 * server, the worker), and a fleet where one host drifts alerts for that host alone. The key's
 * prefix is written into the statements, so a test counting a call's statements can tell them apart.
 */
const clockIncident = (host: string) => `clock:${host}`;

/** This host's clock neared the webhook window: one clock.skewed per incident, whichever process saw it first. */
export async function alertOnClockSkewed(
  host: string,
  skew: { skewSeconds: number; source: string; toleranceSeconds: number; summary: string },
): Promise<void> {
  await db().$transaction(async (tx) => {
    if (!(await openIncident(tx, clockIncident(host)))) return;
    await raiseAlert(tx, {
      type: "clock.skewed",
      incident: clockIncident(host),
      summary: `On ${host}, ${skew.summary}.`,
      details: { host, skewSeconds: skew.skewSeconds, toleranceSeconds: skew.toleranceSeconds, source: skew.source },
    });
  });
}

/** This host's clock agrees with the service's again (or a process started after it was fixed): an open incident closes. */
export async function alertOnClockInSync(host: string, skewSeconds: number): Promise<void> {
  // One indexed read first, so the usual case (no incident) costs no transaction.
  const [incident] = await db().$queryRaw<{ open: boolean }[]>`SELECT open FROM alert_incidents WHERE key = 'clock:' || ${host}`;
  if (!incident?.open) return;
  await db().$transaction(async (tx) => {
    const closed = await tx.$queryRaw<{ key: string }[]>`
      UPDATE alert_incidents SET open = false, closed_at = now(), updated_at = now()
      WHERE key = 'clock:' || ${host} AND open RETURNING key`;
    if (closed.length === 0) return; // another process closed it first, and raised the alert
    await raiseAlert(tx, {
      type: "clock.recovered",
      incident: clockIncident(host),
      summary: `On ${host}, the app's clock agrees with the service's again (${skewSeconds} s apart): webhooks are checked against a clock that is right.`,
      details: { host, skewSeconds },
    });
  });
}
