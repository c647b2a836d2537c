// What the consent page and the re-authorization page share: the EXACT scope list the operator grants (one <li> per
// scope, its text the scope string, so people and tests read the same thing) with each scope's description, and the
// Approve/Deny buttons of the decision form.
// The odd indentation inside the templates is on purpose: it is the pages' own, so their HTML stays byte for byte.
import { html } from "hono/html";
import { SCOPE_DESCRIPTIONS } from "../scopes.js";

type Html = ReturnType<typeof html>;

export function scopeList(scopes: string[]): Html {
  return html`<h2>It will be allowed to:</h2>
      <ul class="scopes" aria-label="Requested scopes">
        ${scopes.map((scope) => html`<li>${scope}</li>`)}
      </ul>
      <dl class="scope-help">
        ${scopes.map((scope) => html`<dt>${scope}</dt><dd>${SCOPE_DESCRIPTIONS[scope] ?? "Access described by the service's scope documentation."}</dd>`)}
      </dl>`;
}

/** The row inside a decision form: submits decision=approve or decision=deny. */
export function decisionButtons(): Html {
  return html`<div class="row">
          <button type="submit" name="decision" value="approve">Approve</button>
          <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
        </div>`;
}
