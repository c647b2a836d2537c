// /admin/webhooks: every webhook delivery the app recorded, and the ones it refused before recording
// anything (counted per minute and reason: lib/webhooks/rejections.ts), newest first. Searchable by
// delivery id, install_id or event type; filterable by outcome and by the reason for a refusal.
import type { Metadata } from "next";
import Link from "next/link";
import { DataTable } from "@/app/components/data-table";
import { KeysetPages } from "@/app/components/keyset-pages";
import { OUTCOME_WORDS, fetchWebhookLog, readWebhookLogQuery, type WebhookLogQuery } from "@/lib/admin/webhook-log";
import { requireStaff } from "@/lib/auth/staff";
import { REJECTION_REASONS, type RejectionReason } from "@/lib/webhooks/rejections";
import { formatTime } from "../../format";

export const metadata: Metadata = { title: "Webhooks · Staff console" };

export const dynamic = "force-dynamic";

function logHref(query: { q?: string; outcome?: string; reason?: string; after?: string }): string {
  const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => !!entry[1] && entry[1] !== "all"));
  const text = params.toString();
  return text ? `/admin/webhooks?${text}` : "/admin/webhooks";
}

const filtersOf = (query: WebhookLogQuery) => ({ q: query.q, outcome: query.outcome, reason: query.reason });

export default async function WebhookLogPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requireStaff();
  const query = readWebhookLogQuery(await searchParams);
  const log = await fetchWebhookLog(query);
  const filters = filtersOf(query);
  const filtered = !!(query.q || query.reason || query.outcome !== "all");
  const showRecorded = query.outcome !== "rejected" && !query.reason;
  const showRejected = (query.outcome === "all" || query.outcome === "rejected") && !query.q;
  const refusedToday = Object.values(log.rejectedLastDay).reduce((sum, n) => sum + (n ?? 0), 0);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-xl font-semibold">Webhook log</h1>
        <p className="text-sm text-slate-600">Every delivery, refused ones included. Newest first; times in UTC.</p>
      </div>

      <form method="get" action="/admin/webhooks" className="flex flex-wrap items-end gap-3 text-sm" role="search">
        <label className="flex min-w-0 flex-col gap-1">
          <span className="text-slate-600">Delivery id, install id or event type</span>
          <input name="q" defaultValue={query.q ?? ""} maxLength={200} className="w-72 max-w-full rounded-md border border-slate-300 px-2 py-1" />
        </label>
        <label className="flex min-w-0 flex-col gap-1">
          <span className="text-slate-600">Outcome</span>
          <select name="outcome" defaultValue={query.outcome} className="rounded-md border border-slate-300 px-2 py-1">
            <option value="all">All</option>
            <option value="processed">Accepted and applied</option>
            <option value="ignored">Accepted, not acted on</option>
            <option value="invalid">Signed, content refused</option>
            <option value="rejected">Refused before recording</option>
          </select>
        </label>
        <label className="flex min-w-0 flex-col gap-1">
          <span className="text-slate-600">Why refused</span>
          <select name="reason" defaultValue={query.reason ?? ""} className="max-w-full rounded-md border border-slate-300 px-2 py-1">
            <option value="">Any reason</option>
            {Object.keys(REJECTION_REASONS).map((reason) => (
              <option key={reason} value={reason}>
                {reason.replaceAll("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="rounded-md border border-slate-300 bg-white px-3 py-1 font-medium hover:bg-slate-50">
          Search
        </button>
        {filtered ? (
          <Link href="/admin/webhooks" className="py-1 text-brand-700 hover:underline">
            Clear
          </Link>
        ) : null}
      </form>

      {showRejected ? (
        <section className="space-y-2" aria-labelledby="refused-heading">
          <h2 id="refused-heading" className="font-semibold">
            Refused before recording <span className="font-normal text-slate-600">({refusedToday.toLocaleString("en")} in the last 24 h)</span>
          </h2>
          <p className="text-sm text-slate-600">
            Counted per minute and reason, never stored one by one: anyone can send these. Many bad signatures at once usually mean the
            webhook secret differs from the service&apos;s; &quot;not recorded&quot; deliveries are lost until the service replays them.
          </p>
          <DataTable label="Refused before recording" columns={["Minute", "Why", { label: "Count", className: "text-right" }]} testId="webhook-rejections">
            {log.rejections.length === 0 ? (
              <tr>
                <td colSpan={3} className="px-3 py-6 text-center text-slate-500" data-testid="webhook-rejections-empty">
                  No delivery refused{query.reason ? " for this reason" : ""} in the last 30 days.
                </td>
              </tr>
            ) : null}
            {log.rejections.map((row) => (
              <tr key={`${row.minute.getTime()}-${row.reason}`} data-reason={row.reason}>
                <td className="px-3 py-2 text-xs whitespace-nowrap sm:text-sm">{formatTime(row.minute).slice(0, 16)} UTC</td>
                <td className="px-3 py-2">
                  <span className="font-mono text-xs">{row.reason}</span>
                  <div className="text-slate-700">{REJECTION_REASONS[row.reason as RejectionReason]}</div>
                  {row.deliveryIds.length > 0 ? (
                    <div className="text-xs text-slate-700" data-testid="rejection-delivery-ids">
                      Delivery ids to replay: <span className="font-mono break-all">{row.deliveryIds.join(", ")}</span>
                    </div>
                  ) : null}
                </td>
                <td className="px-3 py-2 text-right tabular-nums" data-testid="rejection-count">
                  {row.count.toLocaleString("en")}
                </td>
              </tr>
            ))}
          </DataTable>
        </section>
      ) : null}

      {showRecorded ? (
        <section className="space-y-2" aria-labelledby="recorded-heading">
          <h2 id="recorded-heading" className="font-semibold">
            Recorded deliveries
          </h2>
          <DataTable
            label="Recorded deliveries"
            columns={["Received", "Event", { label: "Install", className: "hidden sm:table-cell" }, { label: "Outcome", className: "hidden md:table-cell" }]}
            testId="webhook-deliveries"
          >
            {log.deliveries.length === 0 ? (
              <tr>
                <td colSpan={4} className="px-3 py-6 text-center text-slate-500" data-testid="webhook-deliveries-empty">
                  {filtered || query.after ? "No delivery matches." : "No delivery yet. The service sends one when an operator installs, changes or uninstalls the app."}
                </td>
              </tr>
            ) : null}
            {log.deliveries.map((delivery) => (
              <tr key={delivery.id} data-delivery-id={delivery.deliveryId ?? ""} data-outcome={delivery.outcome}>
                <td className="px-3 py-2">
                  <div className="text-xs whitespace-nowrap sm:text-sm">{formatTime(delivery.receivedAt)}</div>
                  <div className="font-mono text-xs break-all text-slate-500">{delivery.deliveryId ?? "no id (deduplicated by its body)"}</div>
                </td>
                <td className="px-3 py-2">
                  <span className="font-mono text-xs">{delivery.eventType ?? "unreadable"}</span>
                  <div className="mt-1 text-xs text-slate-600 md:hidden">{OUTCOME_WORDS[delivery.outcome] ?? delivery.outcome}</div>
                  {delivery.installId !== null ? <div className="text-xs text-slate-500 sm:hidden">install {delivery.installId}</div> : null}
                </td>
                <td className="hidden px-3 py-2 font-mono sm:table-cell">
                  {delivery.installId !== null ? (
                    <Link href={logHref({ q: String(delivery.installId) })} className="text-brand-700 hover:underline">
                      {delivery.installId}
                    </Link>
                  ) : (
                    <span className="text-slate-500">—</span>
                  )}
                </td>
                <td className="hidden px-3 py-2 md:table-cell">
                  {OUTCOME_WORDS[delivery.outcome] ?? delivery.outcome}
                  {delivery.detail ? <div className="text-xs text-slate-600">{delivery.detail}</div> : null}
                </td>
              </tr>
            ))}
          </DataTable>
          <KeysetPages olderHref={log.next ? logHref({ ...filters, after: log.next }) : null} newestHref={query.after ? logHref(filters) : null} testId="webhooks" />
        </section>
      ) : null}
    </div>
  );
}
