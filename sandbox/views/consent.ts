// The consent screen (contract §2): app name, operator, and the EXACT scope list, offline_access included.
// Each scope is an <li> whose text is the scope string, so people and tests read the same thing.
import { html } from "hono/html";
import { layout } from "./layout.js";
import { decisionButtons, scopeList } from "./scope-list.js";

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
      ${scopeList(view.scopes)}
      <form method="post" action="/idp/consent">
        <input type="hidden" name="consent_challenge" value="${view.challenge}" />
        ${decisionButtons()}
      </form>
      <p class="muted">After your choice you are sent back to the app at <code>${view.redirectUri}</code>.</p>
    </div>`,
  });
}
