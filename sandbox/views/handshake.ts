// The install handshake, request by request (README decision 52): who sent each request, what the service checked
// (a mark per check), what it did and what it answered. For learners watching the flow happen, and for finding which
// check stopped a failed one. One column of blocks, so it reads the same at desktop and phone width.
import { html } from "hono/html";
import type { Caller, Handshake, HandshakeStep } from "../console/handshake.js";
import { layout } from "./layout.js";

type Html = ReturnType<typeof html>;

export interface HandshakeView {
  /** The handshake shown, or null when the log holds none (or not the one asked for). */
  selected: Handshake | null;
  /** Other handshakes to pick from, newest first (one install's when `installId` is set). */
  recent: Handshake[];
  installId: number | null;
  /** Set when a handshake or install was asked for and the log does not hold it. */
  missing: string | null;
  operatorName(operatorId: number | null): string;
  redirectUri: string;
}

const CALLERS: Record<Caller, string> = {
  browser: "operator's browser",
  app: "the app's server",
  service: "the service → the app",
  test: "a test (control API)",
};

const STATUS: Record<Handshake["status"], { label: string; className: string }> = {
  completed: { label: "Completed", className: "badge" },
  failed: { label: "A check failed", className: "badge bad-badge" },
  denied: { label: "Denied by the operator", className: "badge warn" },
  unfinished: { label: "Not finished", className: "badge warn" },
};

/** The sandbox clock's time of day, with the full instant on hover. */
function time(at: string): Html {
  return html`<time datetime="${at}" title="${at}">${at.slice(11, 23)}</time>`;
}

function step(s: HandshakeStep, n: number): Html {
  return html`<li class="step${s.failed ? " failed" : ""}" data-seq="${s.seq}" data-caller="${s.caller}" data-failed="${s.failed ? "true" : "false"}">
    <div class="step-head">
      <span class="step-n">${n}</span>
      <span class="caller ${s.caller}">${CALLERS[s.caller]}</span>
      <code class="request">${s.method} ${s.path}</code>
    </div>
    <div class="step-title"><strong>${s.title}</strong> · ${time(s.at)}</div>
    ${s.checks.length > 0
      ? html`<ul class="checks" aria-label="Checks">
          ${s.checks.map(
            (check) => html`<li data-check="${check.passed ? "pass" : "fail"}"><span class="mark ${check.passed ? "ok" : "bad"}" aria-hidden="true">${check.passed ? "✓" : "✗"}</span><span class="sr">${check.passed ? "passed: " : "failed: "}</span>${check.text}</li>`,
          )}
        </ul>`
      : ""}
    ${s.results.length > 0 ? html`<ul class="results" aria-label="What it did">${s.results.map((r) => html`<li>${r}</li>`)}</ul>` : ""}
    ${s.answer ? html`<div class="answer">Answer: ${s.answer}</div>` : ""}
  </li>`;
}

/** The browser's request to the app's redirect_uri happens between the consent and the code redemption, unseen here. */
function redirectNote(redirectUri: string): Html {
  return html`<li class="step note" data-note="redirect">
    <div class="step-head"><span class="caller browser">${CALLERS.browser}</span> <code class="request">GET ${redirectUri}?code=…&amp;scope=…&amp;state=…&amp;iss=…</code></div>
    <div>The browser follows the redirect to the app. The sandbox does not see this request: the app checks
      <code>state</code> and <code>iss</code> there, and redeems the code at once (it lives one minute).</div>
  </li>`;
}

function selectedCard(view: HandshakeView, h: Handshake): Html {
  const status = STATUS[h.status];
  let n = 0;
  return html`<section class="card" aria-label="Handshake ${h.id}" data-handshake="${h.id}" data-status="${h.status}">
    <h2>Handshake <code>${h.id}</code> <span class="${status.className}">${status.label}</span></h2>
    <p class="muted">${view.operatorName(h.operatorId)}${h.installId !== null ? html` · install_id ${h.installId}` : ""} · started ${h.startedAt}
      · <a href="/_sandbox/events?handshake=${h.id}">as JSON</a></p>
    ${h.failure
      ? html`<p class="notice error" role="alert">Step ${h.failure.step}, ${h.failure.title}: ${h.failure.check ? html`failed check: <strong>${h.failure.check}</strong>` : "refused"}.</p>`
      : ""}
    <ol class="steps" aria-label="Requests of the handshake, in order">
      ${h.steps.map((s) => {
        n += 1;
        return html`${step(s, n)}${s.redirectsToApp ? redirectNote(view.redirectUri) : ""}`;
      })}
    </ol>
  </section>`;
}

function recentCard(view: HandshakeView): Html {
  return html`<section class="card" aria-label="Handshakes">
    <h2>${view.installId !== null ? html`Handshakes of install_id ${view.installId}` : "Recent handshakes"}</h2>
    ${view.recent.length === 0
      ? html`<p class="muted">None in the event log.</p>`
      : html`<ul class="plain" aria-label="Handshakes, newest first">
          ${view.recent.map(
            (h) => html`<li data-handshake="${h.id}">
              <a href="/console/handshake?id=${h.id}"><code>${h.id}</code></a>
              <span class="${STATUS[h.status].className}">${STATUS[h.status].label}</span>
              <div class="muted">${view.operatorName(h.operatorId)}${h.installId !== null ? ` · install_id ${h.installId}` : ""} · ${h.steps.length} request${h.steps.length === 1 ? "" : "s"} · ${h.startedAt}</div>
            </li>`,
          )}
        </ul>`}
    ${view.installId !== null ? html`<p class="muted"><a href="/console/handshake">All recent handshakes</a></p>` : ""}
  </section>`;
}

export function handshakePage(view: HandshakeView): ReturnType<typeof layout> {
  return layout({
    title: "Install handshake",
    area: "console",
    body: html`<h1>Install handshake</h1>
      <p class="lead">Each request of the install flow, in order, as the service saw it: who sent it, what the service
        checked (<span class="ok">✓</span> passed, <span class="bad">✗</span> failed), what it did and what it answered.
        Tokens, codes and secrets are never shown, here or in the event log.</p>
      ${view.missing ? html`<p class="notice" role="status">${view.missing}</p>` : ""}
      ${view.selected
        ? selectedCard(view, view.selected)
        : html`<div class="card"><p class="muted">No handshake to show yet: connect the app from the
            <a href="/portal">operator portal</a>, then come back.</p></div>`}
      ${recentCard(view)}
      <p class="muted"><a href="/console">Back to the console</a></p>`,
  });
}
