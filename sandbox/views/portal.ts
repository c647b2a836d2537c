// Operator portal pages: pick an operator, then the app catalogue with Connect (and Uninstall once installed).
import { html } from "hono/html";
import { CONFIG_CURRENCIES, type InstallConfig } from "../install-config.js";
import type { Operator } from "../seed.js";
import type { InstallRecord } from "../store.js";
import { layout } from "./layout.js";

export function operatorPickerPage(operators: Operator[], current: Operator | undefined, unlisted = 0): ReturnType<typeof layout> {
  return layout({
    title: "Choose an operator",
    who: current?.name ?? null,
    body: html`<h1>Choose an operator</h1>
      <p class="lead">The sandbox has no passwords: pick the charging-network operator you want to act as.
        In production, operators sign in to the service's portal.</p>
      <div class="card">
        <ul class="plain">
          ${operators.map(
            (operator) => html`<li>
              <a class="operator-link" href="/portal/operators/${operator.id}">${operator.name}</a>
              <div class="muted">operator id ${operator.id} · slug <code>${operator.slug}</code></div>
            </li>`,
          )}
        </ul>
        ${unlisted > 0 ? html`<p class="muted">and ${unlisted} operator(s) created through the control API, not listed: open <code>/portal/operators/&lt;id&gt;</code></p>` : ""}
      </div>`,
  });
}

export interface CatalogueView {
  operator: Operator;
  appName: string;
  requestedScopes: string[];
  install: InstallRecord | undefined;
  lastWebhook: { type: string; outcome: string; detail: string } | undefined;
  /** The install's configuration and the operator's sites, when installed. */
  config: { current: InstallConfig; sites: { id: number; label: string }[] } | undefined;
  /** Set after a save: the delivery id of the install.config.updated it sent. */
  savedDeliveryId: string | null;
  reauthUrl: string | null;
}

function configForm(operatorId: number, installId: number, config: NonNullable<CatalogueView["config"]>): ReturnType<typeof html> {
  const { current, sites } = config;
  return html`<form method="post" action="/portal/operators/${operatorId}/config" aria-label="App configuration">
    <input type="hidden" name="install_id" value="${installId}" />
    <fieldset>
      <legend>Sites the app may use</legend>
      <div class="muted">None ticked means all sites.</div>
      ${sites.map(
        (site) => html`<label class="check"><input type="checkbox" name="siteIds" value="${site.id}"${current.siteIds.includes(site.id) ? " checked" : ""} /> ${site.label}</label>`,
      )}
    </fieldset>
    <fieldset>
      <legend>Charge sessions</legend>
      <label class="check"><input type="checkbox" name="syncCharges" value="on"${current.syncCharges ? " checked" : ""} /> Sync charge sessions</label>
    </fieldset>
    <fieldset>
      <legend>Currency</legend>
      <label>Report in
        <select name="currency">
          ${CONFIG_CURRENCIES.map((c) => html`<option value="${c}"${c === current.currency ? " selected" : ""}>${c}</option>`)}
        </select>
      </label>
    </fieldset>
    <div class="row"><button type="submit">Save configuration</button></div>
    <p class="muted">Saving sends <code>install.config.updated</code> to the app with the whole configuration.</p>
  </form>`;
}

export function cataloguePage(view: CatalogueView): ReturnType<typeof layout> {
  const { operator, install } = view;
  return layout({
    title: `${operator.name} · App catalogue`,
    who: operator.name,
    body: html`<h1>App catalogue</h1>
      <p class="lead">Apps that can work with ${operator.name}'s charging network. Connect starts the authorization
        request; you will see the exact scopes before you approve.</p>
      <div class="card">
        <h2>
          ${view.appName}
          ${install
            ? html`<span class="badge">Installed · install_id ${install.installId}</span>${install.needsReauth ? html`<span class="badge warn">Needs re-authorization</span>` : ""}`
            : ""}
        </h2>
        ${install?.needsReauth && view.reauthUrl
          ? html`<p class="notice">The app's owner widened the scopes it asks for. The app cannot read your data until you
              <a href="${view.reauthUrl}">review and grant the new scopes</a>.</p>`
          : ""}
        <div class="muted">Requests these scopes (the service adds <code>offline_access</code>):</div>
        <ul class="scopes">
          ${view.requestedScopes.map((scope) => html`<li>${scope}</li>`)}
        </ul>
        ${install
          ? html`<p class="muted">Installed ${install.createdAt}. <strong>Open</strong> signs you in to the app (no consent screen
              unless the app asks for something new). Connect again to review the access and re-authorize the same install (same install_id, new tokens).</p>`
          : ""}
        <div class="row">
          ${install
            ? html`<form class="inline" method="post" action="/portal/operators/${operator.id}/open">
                <button type="submit">Open</button>
              </form>`
            : ""}
          <form class="inline" method="post" action="/portal/operators/${operator.id}/connect">
            <button type="submit">Connect</button>
          </form>
          ${install
            ? html`<form class="inline" method="post" action="/portal/operators/${operator.id}/uninstall">
                <input type="hidden" name="install_id" value="${install.installId}" />
                <button type="submit" class="danger">Uninstall</button>
              </form>`
            : ""}
        </div>
      </div>
      ${install && view.config
        ? html`<div class="card">
            <h2>Configuration</h2>
            ${view.savedDeliveryId ? html`<p class="success">Configuration saved; <code>install.config.updated</code> sent (${view.savedDeliveryId}).</p>` : ""}
            ${configForm(operator.id, install.installId, view.config)}
          </div>`
        : ""}
      ${view.lastWebhook
        ? html`<div class="card"><h2>Last webhook</h2><p class="muted"><code>${view.lastWebhook.type}</code> · ${view.lastWebhook.outcome} · ${view.lastWebhook.detail} · <a href="/portal/deliveries">all deliveries</a></p></div>`
        : ""}
      <p class="muted"><a href="/portal">Switch operator</a></p>`,
  });
}
