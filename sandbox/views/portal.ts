// Operator portal pages: pick an operator, then the app catalogue with Connect (and Uninstall once installed).
import { html } from "hono/html";
import type { Operator } from "../seed.js";
import type { InstallRecord } from "../store.js";
import { layout } from "./layout.js";

export function operatorPickerPage(operators: Operator[], current: Operator | undefined): ReturnType<typeof layout> {
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
      </div>`,
  });
}

export interface CatalogueView {
  operator: Operator;
  appName: string;
  requestedScopes: string[];
  install: InstallRecord | undefined;
  lastWebhook: { type: string; outcome: string; detail: string } | undefined;
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
        <div class="muted">Requests these scopes (the service adds <code>offline_access</code>):</div>
        <ul class="scopes">
          ${view.requestedScopes.map((scope) => html`<li>${scope}</li>`)}
        </ul>
        ${install
          ? html`<p class="muted">Installed ${install.createdAt}. Connect again to re-authorize the same install (same install_id, new tokens).</p>`
          : ""}
        <div class="row">
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
      ${view.lastWebhook
        ? html`<div class="card"><h2>Last webhook</h2><p class="muted"><code>${view.lastWebhook.type}</code> · ${view.lastWebhook.outcome} · ${view.lastWebhook.detail}</p></div>`
        : ""}
      <p class="muted"><a href="/portal">Switch operator</a></p>`,
  });
}
