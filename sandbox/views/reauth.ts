// The re-authorization page behind reauth_url (contract §3, §7): the operator sees the EXACT new scope list,
// offline_access included, as on the consent page (one <li> per scope, text = the scope string), and grants or declines.
import { html } from "hono/html";
import { layout } from "./layout.js";
import { decisionButtons, scopeList } from "./scope-list.js";

export interface ReauthView {
  appName: string;
  operatorName: string;
  installId: number;
  /** The full list the operator grants: the app's requested scopes + offline_access. */
  scopes: string[];
  /** Scopes in that list the install has not been granted yet. */
  newScopes: string[];
  /** Scopes the install has that the new list no longer has (a narrowing since the flag). */
  droppedScopes: string[];
  returnUrl: string;
}

export function reauthPage(view: ReauthView): ReturnType<typeof layout> {
  return layout({
    title: `Re-authorize ${view.appName}`,
    who: view.operatorName,
    body: html`<div class="card">
      <h1>Re-authorize ${view.appName}</h1>
      <p class="lead"><strong>${view.appName}</strong> (install_id ${view.installId}) now asks for more access to
        <strong>${view.operatorName}</strong>'s data. Until you approve, it cannot read your data.</p>
      ${view.newScopes.length > 0
        ? html`<p class="notice">New since your last consent: ${view.newScopes.map((scope, i) => html`${i > 0 ? ", " : ""}<code>${scope}</code>`)}</p>`
        : ""}
      ${view.droppedScopes.length > 0
        ? html`<p class="muted">No longer requested: ${view.droppedScopes.map((scope, i) => html`${i > 0 ? ", " : ""}<code>${scope}</code>`)}</p>`
        : ""}
      ${scopeList(view.scopes)}
      <form method="post" action="/portal/reauth/${view.installId}">
        ${decisionButtons()}
      </form>
      <p class="muted">Approving keeps the same install and the app's current tokens; you are then sent back to the app at
        <code>${view.returnUrl}</code>. Denying leaves the app unable to read your data and returns you to the catalogue.</p>
    </div>`,
  });
}

export function reauthNotNeededPage(view: { appName: string; operatorName: string; installId: number; returnUrl: string }): ReturnType<typeof layout> {
  return layout({
    title: "Nothing to re-authorize",
    who: view.operatorName,
    body: html`<div class="card">
      <h1>Nothing to re-authorize</h1>
      <p>${view.appName} (install_id ${view.installId}) already has every scope it asks for.</p>
      <p><a href="${view.returnUrl}">Back to ${view.appName}</a></p>
    </div>`,
  });
}
