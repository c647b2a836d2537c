// The consent screen (contract §2): app name, operator, and the EXACT scope list, offline_access included.
// Each scope is an <li> whose text is the scope string, so people and tests read the same thing.
import { html } from "hono/html";
import { SCOPE_DESCRIPTIONS } from "../scopes.js";
import { layout } from "./layout.js";

export interface ConsentView {
  challenge: string;
  appName: string;
  operatorName: string;
  scopes: string[];
  redirectUri: string;
  reauthorizeInstallId: number | null;
}

export function consentPage(view: ConsentView): ReturnType<typeof layout> {
  return layout({
    title: `Authorize ${view.appName}`,
    who: view.operatorName,
    body: html`<div class="card">
      <h1>Authorize ${view.appName}</h1>
      <p class="lead"><strong>${view.appName}</strong> asks for access to <strong>${view.operatorName}</strong>'s data.</p>
      ${view.reauthorizeInstallId !== null
        ? html`<p class="notice">This app is already installed (install_id ${view.reauthorizeInstallId}). Approving re-authorizes the same install.</p>`
        : ""}
      <h2>It will be allowed to:</h2>
      <ul class="scopes" aria-label="Requested scopes">
        ${view.scopes.map((scope) => html`<li>${scope}</li>`)}
      </ul>
      <dl class="scope-help">
        ${view.scopes.map((scope) => html`<dt>${scope}</dt><dd>${SCOPE_DESCRIPTIONS[scope] ?? "Access described by the service's scope documentation."}</dd>`)}
      </dl>
      <form method="post" action="/idp/consent">
        <input type="hidden" name="consent_challenge" value="${view.challenge}" />
        <div class="row">
          <button type="submit" name="decision" value="approve">Approve</button>
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
        </div>
      </form>
      <p class="muted">After your choice you are sent back to the app at <code>${view.redirectUri}</code>.</p>
    </div>`,
  });
}
