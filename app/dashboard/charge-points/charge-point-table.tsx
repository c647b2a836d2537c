// The charge points from the install's local copy: the filter form (a plain GET form, so it works
// without JavaScript and every view has its own address), the table, and pages.
import Link from "next/link";
import { PER_PAGE_CHOICES, SORTS, type ChargePointList, type ChargePointQuery, type FilterOptions } from "@/lib/dashboard/charge-points";
import { AsOf } from "../_components/as-of";
import { ChargePointStateBadge, chargePointStateLabel, powerLabel } from "../_components/charge-point-state";
import { PageSizeLinks, Pagination, queryString, rangeText } from "../_components/pagination";
import { DataTable } from "@/app/components/data-table";
import { dashboardI18n } from "@/lib/i18n/request";
import type { MessageKey, Translator } from "@/lib/i18n/messages";

const DEFAULTS = { q: "", sort: "name", dir: "asc", page: 0, perPage: 25 } as const;
const SORT_LABELS: Record<(typeof SORTS)[number], MessageKey> = {
  name: "chargePoints.sort.name",
  state: "chargePoints.sort.state",
  power: "chargePoints.sort.power",
  city: "chargePoints.sort.city",
};

export function chargePointsHref(query: ChargePointQuery, change: Partial<ChargePointQuery> = {}): string {
  const next = { ...query, ...change };
  return `/dashboard/charge-points${queryString(
    { q: next.q, state: next.state, type: next.type, site: next.site, team: next.team, sort: next.sort, dir: next.dir, page: next.page, perPage: next.perPage },
    DEFAULTS,
  )}`;
}

const teamLabel = (team: { id: string; name: string | null }, t: Translator) => team.name ?? t("chargePoints.teamFallback", { id: team.id });

export async function ChargePointTable({ list, options, query, asOf }: { list: ChargePointList; options: FilterOptions; query: ChargePointQuery; asOf: Date }) {
  // Numbers and states in the operator's language (lib/i18n/request.ts).
  const { t, f } = await dashboardI18n();
  const teams = options.teams === null ? null : new Map(options.teams.map((team) => [team.id, teamLabel(team, t)]));

  return (
    <section className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-2">
        <div>
          <h2 className="text-lg font-semibold">{t("chargePoints.title")}</h2>
          <p className="text-sm text-slate-600" data-testid="charge-point-count">
            {options.any ? rangeText(list.page, list.perPage, list.items.length, list.total, { t, f }) : t("chargePoints.none")}
          </p>
        </div>
        <AsOf asOf={asOf} />
      </div>

      {options.any ? <Filters options={options} query={query} t={t} /> : null}

      {list.items.length === 0 ? (
        <EmptyState any={options.any} t={t} />
      ) : (
        <DataTable
          label={t("chargePoints.tableLabel")}
          testId="charge-points"
          columns={[
            { label: t("chargePoints.col.name") },
            { label: t("chargePoints.col.state") },
            { label: t("chargePoints.col.type"), className: "hidden sm:table-cell" },
            { label: t("chargePoints.col.location"), className: "hidden md:table-cell" },
            ...(teams ? [{ label: t("chargePoints.col.team"), className: "hidden lg:table-cell" }] : []),
          ]}
        >
          {list.items.map((cp) => (
            <tr key={cp.id} data-charge-point-id={cp.id}>
              <td className="px-3 py-2 font-medium">
                <Link href={`/dashboard/charge-points/${cp.id}`} className="text-brand-700 hover:underline">
                  {cp.name ?? t("chargePoints.fallback", { id: cp.id })}
                </Link>
                {/* The EVSE ID under the name rather than in a column of its own; on a phone, the city too. */}
                {cp.evseId ? <span className="hidden font-mono text-xs font-normal text-slate-500 sm:block">{cp.evseId}</span> : null}
                <span className="block text-xs font-normal text-slate-500 md:hidden">{cp.city ?? ""}</span>
              </td>
              <td className="px-3 py-2">
                <ChargePointStateBadge state={cp.state} t={t} />
              </td>
              <td className="hidden whitespace-nowrap px-3 py-2 sm:table-cell">{powerLabel(cp.type, cp.maxKw, f)}</td>
              <td className="hidden px-3 py-2 md:table-cell">{cp.addressLabel ?? cp.city ?? "—"}</td>
              {teams ? <td className="hidden px-3 py-2 lg:table-cell">{cp.teamId ? (teams.get(cp.teamId) ?? t("chargePoints.teamFallback", { id: cp.teamId })) : "—"}</td> : null}
            </tr>
          ))}
        </DataTable>
      )}

      <div className="flex flex-wrap items-center justify-between gap-3">
        <PageSizeLinks choices={PER_PAGE_CHOICES} current={query.perPage} hrefFor={(n) => chargePointsHref(query, { perPage: n, page: 0 })} words={{ t, f }} />
      </div>
      <Pagination page={list.page} perPage={list.perPage} total={list.total} hrefFor={(page) => chargePointsHref(query, { page })} words={{ t, f }} />
    </section>
  );
}

function EmptyState({ any, t }: { any: boolean; t: Translator }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-center" data-testid="charge-points-empty">
      {any ? (
        <>
          <p className="font-medium">{t("chargePoints.noMatch")}</p>
          <p className="mt-1 text-sm text-slate-600">{t("chargePoints.noMatchHint")}</p>
          <Link href="/dashboard/charge-points" className="mt-3 inline-block text-sm text-brand-700 hover:underline">
            {t("chargePoints.clearFilters")}
          </Link>
        </>
      ) : (
        <>
          <p className="font-medium">{t("chargePoints.none")}</p>
          <p className="mt-1 text-sm text-slate-600">{t("chargePoints.noneHint")}</p>
        </>
      )}
    </div>
  );
}

const fieldClass = "mt-1 block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm";

function Filters({ options, query, t }: { options: FilterOptions; query: ChargePointQuery; t: Translator }) {
  return (
    <form method="get" action="/dashboard/charge-points" className="grid grid-cols-2 gap-3 rounded-lg border border-slate-200 bg-white p-3 sm:grid-cols-3 lg:grid-cols-6" role="search">
      <label className="col-span-2 text-xs font-medium text-slate-600 sm:col-span-3 lg:col-span-2">
        {t("chargePoints.filter.search")}
        <input type="search" name="q" defaultValue={query.q} placeholder={t("chargePoints.filter.searchHint")} maxLength={100} className={fieldClass} />
      </label>
      <label className="text-xs font-medium text-slate-600">
        {t("chargePoints.filter.state")}
        <select name="state" defaultValue={query.state ?? ""} className={fieldClass}>
          <option value="">{t("chargePoints.filter.allStates")}</option>
          {options.states.map((state) => (
            <option key={state} value={state}>
              {chargePointStateLabel(state, t)}
            </option>
          ))}
        </select>
      </label>
      <label className="text-xs font-medium text-slate-600">
        {t("chargePoints.filter.type")}
        <select name="type" defaultValue={query.type ?? ""} className={fieldClass}>
          <option value="">{t("chargePoints.filter.acAndDc")}</option>
          <option value="ac">AC</option>
          <option value="dc">DC</option>
        </select>
      </label>
      <label className="text-xs font-medium text-slate-600">
        {t("chargePoints.filter.site")}
        <select name="site" defaultValue={query.site ?? ""} className={fieldClass}>
          <option value="">{t("chargePoints.filter.allSites")}</option>
          {options.sites.map((site) => (
            <option key={site.id} value={site.id}>
              {site.label}
            </option>
          ))}
        </select>
      </label>
      {options.teams ? (
        <label className="text-xs font-medium text-slate-600">
          {t("chargePoints.filter.team")}
          <select name="team" defaultValue={query.team ?? ""} className={fieldClass}>
            <option value="">{t("chargePoints.filter.allTeams")}</option>
            {options.teams.map((team) => (
              <option key={team.id} value={team.id}>
                {teamLabel(team, t)}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label className="text-xs font-medium text-slate-600">
        {t("chargePoints.filter.sort")}
        <select name="sort" defaultValue={query.sort} className={fieldClass}>
          {SORTS.map((sort) => (
            <option key={sort} value={sort}>
              {t(SORT_LABELS[sort])}
            </option>
          ))}
        </select>
      </label>
      <label className="text-xs font-medium text-slate-600">
        {t("chargePoints.filter.order")}
        <select name="dir" defaultValue={query.dir} className={fieldClass}>
          <option value="asc">{t("chargePoints.filter.asc")}</option>
          <option value="desc">{t("chargePoints.filter.desc")}</option>
        </select>
      </label>
      <input type="hidden" name="perPage" value={query.perPage} />
      <div className="col-span-2 flex items-end gap-3 sm:col-span-1">
        <button type="submit" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
          {t("chargePoints.filter.apply")}
        </button>
        <Link href="/dashboard/charge-points" className="py-1.5 text-sm text-brand-700 hover:underline">
          {t("chargePoints.filter.clear")}
        </Link>
      </div>
    </form>
  );
}
