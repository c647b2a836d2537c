// The app-owner console: the app's registration as the service holds it, where the app owner changes the requested
// scopes (contract §3, §5.9: widening forces re-consent of every install; narrowing triggers nothing).
import { html } from "hono/html";
import type { ReceivedAlert } from "../alert-sink.js";
import type { InstallRecord } from "../store.js";
import { layout } from "./layout.js";

export interface ConsoleView {
  appName: string;
  clientId: string;
  redirectUri: string;
  webhookUrl: string;
  clientExists: boolean;
  secretState: string;
  requestedScopes: string[];
  /** Known data scopes offered as checkboxes (the requested ones are ticked). */
  knownScopes: string[];
  installs: { install: InstallRecord; operatorName: string; reauthUrl: string | null }[];
  /** The EVSE charge-history beta of each seeded operator (decision 47: the service operator's switch). */
  energyBeta: { operatorId: number; operatorName: string; enabled: boolean }[];
  /** The newest alerts the app sent to the alert sink, newest first (decision 50). */
  alerts: ReceivedAlert[];
  /** Whether the sink knows the app's alert secret (else every signature is "unchecked"). */
  alertSignatureChecked: boolean;
  /** What the last save did (from the redirect's query). */
  notice: { kind: "success" | "notice"; text: string } | null;
  error: string | null;
}

export function consolePage(view: ConsoleView): ReturnType<typeof layout> {
  const custom = view.requestedScopes.filter((scope) => !view.knownScopes.includes(scope));
  return layout({
    title: "App owner console",
    area: "console",
    wide: true,
    body: html`<h1>${view.appName}</h1>
      <p class="lead">Your app's registration with the service, as its owner sees it.</p>
      ${view.notice ? html`<p class="${view.notice.kind}" role="status">${view.notice.text}</p>` : ""}
      ${view.error ? html`<p class="notice error" role="alert">${view.error}</p>` : ""}
      <div class="card">
        <h2>Registration</h2>
        <table class="events">
          <tbody>
            <tr><th>client_id</th><td><code>${view.clientId}</code> ${view.clientExists ? html`<span class="ok">registered</span>` : html`<span class="bad">removed from the identity provider</span>`}</td></tr>
            <tr><th>client_secret</th><td>${view.secretState} <span class="muted">(never shown here)</span></td></tr>
            <tr><th>redirect_uri</th><td><code>${view.redirectUri}</code></td></tr>
            <tr><th>Webhook URL</th><td><code>${view.webhookUrl}</code> · <a href="/portal/deliveries">delivery log</a></td></tr>
          </tbody>
        </table>
        <p class="muted">Watch an install happen: <a href="/console/handshake">the latest handshake</a>, each request in
          order with what the service checked.</p>
      </div>
      <div class="card">
        <h2>Requested scopes</h2>
        <p class="muted">Currently requested:</p>
        <ul class="scopes" aria-label="Currently requested scopes">
          ${view.requestedScopes.map((scope) => html`<li>${scope}</li>`)}
        </ul>
        <form method="post" action="/console/scopes" aria-label="Requested scopes">
          <fieldset>
            <legend>Scopes the app requests</legend>
            ${view.knownScopes.map(
              (scope) => html`<label class="check"><input type="checkbox" name="scopes" value="${scope}"${view.requestedScopes.includes(scope) ? " checked" : ""} /> <code>${scope}</code></label>`,
            )}
            <label>Other scopes (space separated)
              <input type="text" name="extra" value="${custom.join(" ")}" placeholder="e.g. teams:write" />
            </label>
          </fieldset>
          <div class="row"><button type="submit">Save scopes</button></div>
        </form>
        <p class="muted">The service adds <code>offline_access</code> itself. Adding any scope (widening) flags every
          existing install: its API calls answer 403 <code>NEEDS_REAUTH</code> until the operator grants the new list at
          the install's <code>reauth_url</code>. Removing scopes (narrowing) changes nothing for existing installs.</p>
      </div>
      <div class="card">
        <h2>Installs</h2>
        ${view.installs.length === 0
          ? html`<p class="muted">No installs yet: an operator connects the app from the <a href="/portal">operator portal</a>.</p>`
          : html`<table class="events" aria-label="Installs">
              <thead><tr><th>install_id</th><th>Operator</th><th>Status</th><th>Granted scopes</th><th>Re-authorization</th><th>Handshake</th></tr></thead>
              <tbody>
                ${view.installs.map(
                  ({ install, operatorName, reauthUrl }) => html`<tr data-install-id="${install.installId}">
                    <td class="num">${install.installId}</td>
                    <td>${operatorName}</td>
                    <td>${install.status}</td>
                    <td>${install.scopes.map((scope) => html`<code>${scope}</code> `)}</td>
                    <td>${install.needsReauth && reauthUrl
                      ? html`<span class="badge warn">Needs re-authorization</span> <a href="${reauthUrl}">reauth_url</a>`
                      : "—"}</td>
                    <td><a href="/console/handshake?install_id=${install.installId}" aria-label="Handshake of install_id ${install.installId}">handshake</a></td>
                  </tr>`,
                )}
              </tbody>
            </table>`}
      </div>
      <div class="card">
        <h2>Beta: EVSE charge history</h2>
        <p class="muted">Off by default. The service enables it per operator account when the operator asks their
          business partner contact (contract §4.3). Off, the operation answers 403 <code>FEATURE_NOT_ENABLED</code>.</p>
        <table class="events" aria-label="EVSE charge history per operator">
          <thead><tr><th>Operator</th><th>Status</th><th></th></tr></thead>
          <tbody>
            ${view.energyBeta.map(
              (row) => html`<tr data-operator-id="${row.operatorId}">
                <td>${row.operatorName}</td>
                <td>${row.enabled ? html`<span class="badge ok">Enabled</span>` : "Off"}</td>
                <td><form method="post" action="/console/energy-beta">
                  <input type="hidden" name="operatorId" value="${row.operatorId}">
                  <input type="hidden" name="enabled" value="${row.enabled ? "false" : "true"}">
                  <button type="submit" aria-label="${row.enabled ? "Disable" : "Enable"} for ${row.operatorName}">${row.enabled ? "Disable" : "Enable"}</button>
                </form></td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${alertsCard(view)}`,
  });
}

/** One entry per alert: the fields an on-call person reads first, and whether its signature checked out. */
function alertField(alert: ReceivedAlert, name: string): string {
  const value = (alert.json as Record<string, unknown> | null)?.[name];
  return typeof value === "string" ? value : "";
}

function alertsCard(view: ConsoleView) {
  return html`<div class="card">
    <h2>Alerts received</h2>
    <p class="muted">The app's outbound alerts (its <code>ALERT_WEBHOOK_URL</code> points at
      <code>/_sandbox/alert-sink</code> in development): the newest 20.
      ${view.alertSignatureChecked ? "Signatures are checked with the app's ALERT_WEBHOOK_SECRET." : "ALERT_WEBHOOK_SECRET is not set here: signatures are not checked."}</p>
    ${view.alerts.length === 0
      ? html`<p class="muted">No alert yet: one arrives when an install needs re-authorization or a re-install, when
          <code>invalid_client</code> opens the app's token circuit, when a sync keeps failing, and when each recovers.</p>`
      : html`<ol aria-label="Alerts received" style="list-style:none;padding:0;margin:0">
          ${view.alerts.map(
            (alert) => html`<li data-alert-seq="${alert.seq}" style="border-bottom:1px solid var(--line);padding:6px 0;overflow-wrap:anywhere">
              <div>#${alert.seq} <code>${alertField(alert, "type") || "(not JSON)"}</code> ·
                signature ${alert.signature === "valid" ? html`<span class="ok">valid</span>` : alert.signature === "unchecked" ? "unchecked" : html`<span class="bad">${alert.signature}</span>`} ·
                answered ${alert.answeredStatus}</div>
              <div>${alertField(alert, "summary") || alertField(alert, "text")}</div>
              <div class="muted">${alert.receivedAt}</div>
            </li>`,
          )}
        </ol>`}
  </div>`;
}
