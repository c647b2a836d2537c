// The sessions list from the install's local copy: filters (a plain GET form), the currency note,
// the table, pages and the CSV export of the same filtered list; and the states shown instead of it.
import Link from "next/link";
import { RefreshWhileCopying } from "../_components/refresh-while-copying";
import { SESSION_PER_PAGE_CHOICES, type SessionList, type SessionQuery } from "@/lib/dashboard/sessions";
import { dashboardI18n } from "@/lib/i18n/request";
import { AsOf } from "../_components/as-of";
import { PageSizeLinks, Pagination, queryString, rangeText } from "../_components/pagination";
import { SessionStateBadge, sessionStateLabel } from "../_components/session-state";
import { DataTable } from "@/app/components/data-table";

const DEFAULTS = { page: 0, perPage: 25 } as const;

function filterValues(query: SessionQuery) {
  return { from: query.from, to: query.to, chargePoint: query.chargePoint };
}

export function sessionsHref(query: SessionQuery, change: Partial<SessionQuery> = {}): string {
  const next = { ...query, ...change };
  return `/dashboard/sessions${queryString({ ...filterValues(next), page: next.page, perPage: next.perPage }, DEFAULTS)}`;
}

const UNAVAILABLE = {
  not_imported: {
    title: "Sessions are not imported",
    text: "The app's configuration for this install says not to import charging sessions, so the app keeps none. The operator can change this in the app's configuration in the operator portal.",
  },
  not_granted: {
    title: "Sessions are not shared with the app",
    text: "The app was not granted access to charging sessions, so it cannot show them. They become available if the app asks for that access and you approve.",
  },
  being_copied: {
    title: "Sessions are being copied",
    text: "The app is making its copy of your charging sessions from the service. They appear here once the copy is complete; this page needs no action from you.",
  },
} as const;

/** `updating`: the copy is under way for an ACTIVE install, so the page refreshes itself until it is complete. */
export function SessionsUnavailable({ reason, updating = false }: { reason: keyof typeof UNAVAILABLE; updating?: boolean }) {
  const { title, text } = UNAVAILABLE[reason];
  return (
    <section className="space-y-3">
      <h2 className="text-lg font-semibold">Sessions</h2>
      <div className="rounded-lg border border-slate-200 bg-white p-6" data-testid="sessions-unavailable" data-reason={reason}>
        <p className="font-medium">{title}</p>
        <p className="mt-1 text-sm text-slate-600">{text}</p>
        {updating ? <RefreshWhileCopying /> : null}
      </div>
    </section>
  );
}

const durationOf = (s: { startedAt: Date | null; stoppedAt: Date | null }) => (s.startedAt && s.stoppedAt ? s.stoppedAt.getTime() - s.startedAt.getTime() : null);

export async function SessionTable({
  list,
  query,
  chargePoints,
  asOf,
  reportingCurrency,
}: {
  list: SessionList;
  query: SessionQuery;
  chargePoints: { id: string; name: string | null }[];
  asOf: Date;
  reportingCurrency: string | undefined;
}) {
  // lib/dashboard/config.ts: amounts are never converted. Said once, above the table, when the
  // operator chose a reporting currency that the records shown are not in.
  const otherCurrencies = [...new Set(list.items.map((s) => s.currency).filter((c): c is string => Boolean(c) && c !== reportingCurrency))];
  const exportHref = `/dashboard/sessions/export${queryString(filterValues(query), {})}`;
  // Dates, times, amounts and energy in the operator's language and zone (lib/i18n/request.ts).
  const { t, f } = await dashboardI18n();
  return (
    <section className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <div>
          <h2 className="text-lg font-semibold">Sessions</h2>
          <p className="text-sm text-slate-600" data-testid="session-count">
            {list.total === 0 && !list.filtered ? "No sessions" : `${rangeText(list.page, list.perPage, list.items.length, list.total, { t, f })}, newest first`}
          </p>
        </div>
        <AsOf asOf={asOf} />
      </div>

      <Filters query={query} chargePoints={chargePoints} exportHref={exportHref} />

      {reportingCurrency && otherCurrencies.length > 0 ? (
        <p className="rounded-md border border-sky-200 bg-sky-50 p-3 text-sm text-sky-900" data-testid="currency-note">
          Your reporting currency is {reportingCurrency}, but these sessions are recorded in {otherCurrencies.join(", ")}. Each amount is shown
          in its session&apos;s own currency; the app does not convert amounts.
        </p>
      ) : null}

      {list.items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-center" data-testid="sessions-empty">
          {list.filtered ? (
            <>
              <p className="font-medium">No sessions match</p>
              <p className="mt-1 text-sm text-slate-600">Try a wider date range, or another charge point.</p>
              <Link href="/dashboard/sessions" className="mt-3 inline-block text-sm text-brand-700 hover:underline">
                Clear filters
              </Link>
            </>
          ) : (
            <>
              <p className="font-medium">No sessions</p>
              <p className="mt-1 text-sm text-slate-600">The service lists no charging sessions for this operator yet.</p>
            </>
          )}
        </div>
      ) : (
        <DataTable
          label="Charging sessions"
          testId="sessions"
          columns={[
            { label: "Started" },
            { label: "Charge point" },
            { label: "Energy", className: "text-right" },
            { label: "Duration", className: "hidden sm:table-cell text-right" },
            // The price, as Revenue on the Overview sums it (docs/spec-gaps.md A78): the list and the
            // total must add up. The session's page shows its cost too.
            { label: "Price", className: "hidden sm:table-cell text-right" },
            { label: "State", className: "hidden md:table-cell" },
          ]}
        >
          {list.items.map((s) => (
            <tr key={s.id} data-session-id={s.id}>
              <td className="px-3 py-2">
                {/* Date and time on lines of their own, so the column stays narrow on a phone. */}
                <Link href={`/dashboard/sessions/${s.id}`} className="whitespace-nowrap text-brand-700 hover:underline">
                  {s.startedAt ? f.date(s.startedAt) : "Not started"}
                </Link>
                <span className="block whitespace-nowrap text-xs text-slate-500">{s.startedAt ? f.time(s.startedAt) : ""}</span>
              </td>
              <td className="px-3 py-2">
                {s.chargePointId ? <span className="break-words">{s.chargePointName ?? `Charge point ${s.chargePointId}`}</span> : "—"}
                {/* On a phone the price and state move under the name instead of into columns of their own. */}
                <span className="block text-xs text-slate-600 sm:hidden">
                  {f.money(s.price, s.currency, s.currencyDecimals)} · {sessionStateLabel(s.state, t)}
                </span>
              </td>
              <td className="whitespace-nowrap px-3 py-2 text-right">{f.kwh(s.consumedKwh)}</td>
              <td className="hidden whitespace-nowrap px-3 py-2 text-right sm:table-cell">{f.duration(durationOf(s))}</td>
              <td className="hidden whitespace-nowrap px-3 py-2 text-right sm:table-cell" data-testid="session-price">
                {f.money(s.price, s.currency, s.currencyDecimals)}
              </td>
              <td className="hidden px-3 py-2 md:table-cell">
                <SessionStateBadge state={s.state} t={t} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}

      <PageSizeLinks choices={SESSION_PER_PAGE_CHOICES} current={query.perPage} hrefFor={(n) => sessionsHref(query, { perPage: n, page: 0 })} words={{ t, f }} />
      <Pagination page={list.page} perPage={list.perPage} total={list.total} hrefFor={(page) => sessionsHref(query, { page })} words={{ t, f }} />
    </section>
  );
}

const fieldClass = "mt-1 block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm";

function Filters({ query, chargePoints, exportHref }: { query: SessionQuery; chargePoints: { id: string; name: string | null }[]; exportHref: string }) {
  return (
    <form method="get" action="/dashboard/sessions" className="grid grid-cols-2 gap-3 rounded-lg border border-slate-200 bg-white p-3 sm:grid-cols-4" role="search">
      <label className="text-xs font-medium text-slate-600">
        From (UTC)
        <input type="date" name="from" defaultValue={query.from ?? ""} className={fieldClass} />
      </label>
      <label className="text-xs font-medium text-slate-600">
        To (UTC)
        <input type="date" name="to" defaultValue={query.to ?? ""} className={fieldClass} />
      </label>
      <label className="col-span-2 text-xs font-medium text-slate-600 sm:col-span-1">
        Charge point
        <select name="chargePoint" defaultValue={query.chargePoint ?? ""} className={fieldClass}>
          <option value="">All charge points</option>
          {chargePoints.map((cp) => (
            <option key={cp.id} value={cp.id}>
              {cp.name ?? `Charge point ${cp.id}`}
            </option>
          ))}
        </select>
      </label>
      <input type="hidden" name="perPage" value={query.perPage} />
      <div className="col-span-2 flex flex-wrap items-end gap-3 sm:col-span-1">
        <button type="submit" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
          Apply
        </button>
        <Link href="/dashboard/sessions" className="py-1.5 text-sm text-brand-700 hover:underline">
          Clear
        </Link>
        {/* A plain link: the browser downloads the file (Content-Disposition: attachment). */}
        <a href={exportHref} className="py-1.5 text-sm text-brand-700 hover:underline" data-testid="export-csv" download>
          Download CSV
        </a>
      </div>
    </form>
  );
}
