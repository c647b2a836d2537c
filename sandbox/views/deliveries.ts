// The webhook delivery log as a table: one row per attempt (original, duplicate of mode "twice", replay) or per
// dropped delivery, newest first, with its HTTP status or error and its latency, and a Replay button per delivery.
import { html } from "hono/html";
import type { EventRecord } from "../store.js";
import { layout } from "./layout.js";

export interface DeliveriesView {
  rows: EventRecord[];
  total: number;
  installId: number | null;
  replayed: string | null;
  webhookUrl: string;
}

function text(value: unknown): string {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : "";
}

function result(detail: EventRecord["detail"]): ReturnType<typeof html> {
  if (detail.outcome === "dropped") return html`<span class="bad">dropped</span> <span class="muted">(not sent)</span>`;
  if (detail.outcome === "delivered") return html`<span class="ok">HTTP ${text(detail.status)}</span>`;
  return html`<span class="bad">${detail.status !== null && detail.status !== undefined ? `HTTP ${text(detail.status)}` : "no answer"}</span>
    <div class="muted">${text(detail.error)}</div>`;
}

export function deliveriesPage(view: DeliveriesView): ReturnType<typeof layout> {
  return layout({
    title: "Webhook deliveries",
    area: "deliveries",
    wide: true,
    body: html`<h1>Webhook deliveries</h1>
      <p class="lead">Every attempt to POST a signed webhook to <code>${view.webhookUrl}</code>, newest first
        ${view.installId !== null ? html` · install_id ${view.installId} only (<a href="/portal/deliveries">show all</a>)` : ""}.
        Deliveries are best effort and never retried; the service operator replays one on request
        (same delivery id and data, a new <code>delivered_at</code>).</p>
      ${view.replayed ? html`<p class="success">Replayed ${view.replayed}.</p>` : ""}
      <div class="card">
        ${view.rows.length === 0
          ? html`<p class="muted">No deliveries yet.</p>`
          : html`<table class="events" aria-label="Webhook deliveries">
              <thead>
                <tr>
                  <th>#</th><th>Time (sandbox clock)</th><th>Delivery id</th><th>Event</th><th>Install</th><th>Attempt</th>
                  <th>Mode</th><th>delivered_at</th><th>Result</th><th>Latency</th><th></th>
                </tr>
              </thead>
              <tbody>
                ${view.rows.map(
                  (row) => html`<tr data-delivery-id="${text(row.detail.delivery_id)}" data-outcome="${text(row.detail.outcome)}">
                    <td class="num">${row.seq}</td>
                    <td>${row.at}</td>
                    <td><code>${text(row.detail.delivery_id)}</code></td>
                    <td><code>${text(row.detail.event_type)}</code></td>
                    <td><a href="/portal/deliveries?install_id=${text(row.detail.install_id)}">${text(row.detail.install_id)}</a></td>
                    <td>${text(row.detail.kind) || "original"}</td>
                    <td>${text(row.detail.mode) || "—"}</td>
                    <td class="num">${text(row.detail.delivered_at) || "—"}</td>
                    <td>${result(row.detail)}</td>
                    <td class="num">${row.detail.latency_ms !== null && row.detail.latency_ms !== undefined ? `${text(row.detail.latency_ms)} ms` : "—"}</td>
                    <td>
                      <form class="inline" method="post" action="/portal/deliveries/${text(row.detail.delivery_id)}/replay">
                        <button type="submit" class="secondary">Replay</button>
                      </form>
                    </td>
                  </tr>`,
                )}
              </tbody>
            </table>
            ${view.total > view.rows.length ? html`<p class="muted">Showing the newest ${view.rows.length} of ${view.total}; the full log is at <code>GET /_sandbox/deliveries</code>.</p>` : ""}`}
      </div>`,
  });
}
