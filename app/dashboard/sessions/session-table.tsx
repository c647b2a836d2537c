// The sessions list from the install's local copy: filters (a plain GET form), the currency note,
// the table, pages and the CSV export of the same filtered list; and the states shown instead of it.
import Link from "next/link";
import { RefreshWhileCopying } from "../_components/refresh-while-copying";
import { SESSION_PER_PAGE_CHOICES, type SessionList, type SessionQuery } from "@/lib/dashboard/sessions";
import { dashboardI18n } from "@/lib/i18n/request";
import { sessionsTranslator, type SessionsMessageKey, type SessionsTranslator } from "./i18n";
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

// Why there is no list, in the section's catalogue (./_messages/*.json `sessions.unavailable.<reason>.*`).
const UNAVAILABLE = {
  not_imported: { title: "sessions.unavailable.not_imported.title", text: "sessions.unavailable.not_imported.text" },
  not_granted: { title: "sessions.unavailable.not_granted.title", text: "sessions.unavailable.not_granted.text" },
  being_copied: { title: "sessions.unavailable.being_copied.title", text: "sessions.unavailable.being_copied.text" },
} as const satisfies Record<string, { title: SessionsMessageKey; text: SessionsMessageKey }>;

/** `updating`: the copy is under way for an ACTIVE install, so the page refreshes itself until it is complete. */
export async function SessionsUnavailable({ reason, updating = false }: { reason: keyof typeof UNAVAILABLE; updating?: boolean }) {
  const t = sessionsTranslator((await dashboardI18n()).locale);
  const title = t(UNAVAILABLE[reason].title);
  const text = t(UNAVAILABLE[reason].text);
  return (
    <section className="space-y-3">
      <h2 className="text-lg font-semibold">{t("sessions.title")}</h2>
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
  const { f, locale } = await dashboardI18n();
  const t = sessionsTranslator(locale);
  return (
    <section className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <div>
          <h2 className="text-lg font-semibold">{t("sessions.title")}</h2>
          <p className="text-sm text-slate-600" data-testid="session-count">
            {list.total === 0 && !list.filtered ? t("sessions.none") : t("sessions.count", { range: rangeText(list.page, list.perPage, list.items.length, list.total, { t, f }) })}
          </p>
        </div>
        <AsOf asOf={asOf} />
      </div>

      <Filters query={query} chargePoints={chargePoints} exportHref={exportHref} t={t} />

      {reportingCurrency && otherCurrencies.length > 0 ? (
        <p className="rounded-md border border-sky-200 bg-sky-50 p-3 text-sm text-sky-900" data-testid="currency-note">
          {t("sessions.currencyNote", { currency: reportingCurrency, others: otherCurrencies.join(", ") })}
        </p>
      ) : null}

      {list.items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-center" data-testid="sessions-empty">
          {list.filtered ? (
            <>
              <p className="font-medium">{t("sessions.noMatch")}</p>
              <p className="mt-1 text-sm text-slate-600">{t("sessions.noMatchHint")}</p>
              <Link href="/dashboard/sessions" className="mt-3 inline-block text-sm text-brand-700 hover:underline">
                {t("sessions.clearFilters")}
              </Link>
            </>
          ) : (
            <>
              <p className="font-medium">{t("sessions.none")}</p>
              <p className="mt-1 text-sm text-slate-600">{t("sessions.noneYet")}</p>
            </>
          )}
        </div>
      ) : (
        <DataTable
          label={t("sessions.tableLabel")}
          testId="sessions"
          columns={[
            { label: t("sessions.col.started") },
            { label: t("sessions.col.chargePoint") },
            { label: t("sessions.col.energy"), className: "text-right" },
            { label: t("sessions.col.duration"), className: "hidden sm:table-cell text-right" },
            // The price, as Revenue on the Overview sums it (docs/spec-gaps.md A78): the list and the
            // total must add up. The session's page shows its cost too.
            { label: t("sessions.col.price"), className: "hidden sm:table-cell text-right" },
            { label: t("sessions.col.state"), className: "hidden md:table-cell" },
          ]}
        >
          {list.items.map((s) => (
            <tr key={s.id} data-session-id={s.id}>
              <td className="px-3 py-2">
                {/* Date and time on lines of their own, so the column stays narrow on a phone. */}
                <Link href={`/dashboard/sessions/${s.id}`} className="whitespace-nowrap text-brand-700 hover:underline">
                  {s.startedAt ? f.date(s.startedAt) : t("sessions.notStarted")}
                </Link>
                <span className="block whitespace-nowrap text-xs text-slate-500">{s.startedAt ? f.time(s.startedAt) : ""}</span>
              </td>
              <td className="px-3 py-2">
                {s.chargePointId ? <span className="break-words">{s.chargePointName ?? t("sessions.chargePointFallback", { id: s.chargePointId })}</span> : "—"}
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

function Filters({ query, chargePoints, exportHref, t }: { query: SessionQuery; chargePoints: { id: string; name: string | null }[]; exportHref: string; t: SessionsTranslator }) {
  return (
    <form method="get" action="/dashboard/sessions" className="grid grid-cols-2 gap-3 rounded-lg border border-slate-200 bg-white p-3 sm:grid-cols-4" role="search">
      <label className="text-xs font-medium text-slate-600">
        {t("sessions.filter.from")}
        <input type="date" name="from" defaultValue={query.from ?? ""} className={fieldClass} />
      </label>
      <label className="text-xs font-medium text-slate-600">
        {t("sessions.filter.to")}
        <input type="date" name="to" defaultValue={query.to ?? ""} className={fieldClass} />
      </label>
      <label className="col-span-2 text-xs font-medium text-slate-600 sm:col-span-1">
        {t("sessions.filter.chargePoint")}
        <select name="chargePoint" defaultValue={query.chargePoint ?? ""} className={fieldClass}>
          <option value="">{t("sessions.filter.allChargePoints")}</option>
          {chargePoints.map((cp) => (
            <option key={cp.id} value={cp.id}>
              {cp.name ?? t("sessions.chargePointFallback", { id: cp.id })}
            </option>
          ))}
        </select>
      </label>
      <input type="hidden" name="perPage" value={query.perPage} />
      <div className="col-span-2 flex flex-wrap items-end gap-3 sm:col-span-1">
        <button type="submit" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
          {t("sessions.filter.apply")}
        </button>
        <Link href="/dashboard/sessions" className="py-1.5 text-sm text-brand-700 hover:underline">
          {t("sessions.filter.clear")}
        </Link>
        {/* A plain link: the browser downloads the file (Content-Disposition: attachment). */}
        <a href={exportHref} className="py-1.5 text-sm text-brand-700 hover:underline" data-testid="export-csv" download>
          {t("sessions.filter.download")}
        </a>
      </div>
    </form>
  );
}
