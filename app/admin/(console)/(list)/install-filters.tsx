// The search box, the filters and the sort: a plain GET form, so it works without JavaScript and
// every view of the list has its own address to share or bookmark.
import Link from "next/link";
import { INSTALL_STATUSES } from "@/lib/admin/queries";
import { SORTS, SYNC_HEALTHS, TOKEN_HEALTHS, type InstallListQuery } from "@/lib/admin/install-list";
import { STATUS_LABEL } from "../../status-badge";
import { SORT_LABEL, SYNC_HEALTH_LABEL, TOKEN_HEALTH_LABEL } from "./health-words";

const fieldClass = "mt-1 block w-full rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm";

export function InstallFilters({ query }: { query: InstallListQuery }) {
  return (
    <form method="get" action="/admin" role="search" className="grid grid-cols-2 gap-3 rounded-lg border border-slate-200 bg-white p-3 sm:grid-cols-3 lg:grid-cols-6">
      <label className="col-span-2 text-xs font-medium text-slate-600 sm:col-span-3 lg:col-span-2">
        Search
        <input
          type="search"
          name="q"
          defaultValue={query.q}
          placeholder="Operator name or id, install id, row id, slug"
          maxLength={100}
          className={fieldClass}
        />
      </label>
      <label className="text-xs font-medium text-slate-600">
        State
        <select name="state" defaultValue={query.state ?? ""} className={fieldClass}>
          <option value="">All states</option>
          {INSTALL_STATUSES.map((status) => (
            <option key={status} value={status}>
              {STATUS_LABEL[status].label}
            </option>
          ))}
        </select>
      </label>
      <label className="text-xs font-medium text-slate-600">
        Token health
        <select name="token" defaultValue={query.token ?? ""} className={fieldClass}>
          <option value="">Any</option>
          {TOKEN_HEALTHS.map((health) => (
            <option key={health} value={health}>
              {TOKEN_HEALTH_LABEL[health]}
            </option>
          ))}
        </select>
      </label>
      <label className="text-xs font-medium text-slate-600">
        Sync health
        <select name="sync" defaultValue={query.sync ?? ""} className={fieldClass}>
          <option value="">Any</option>
          {SYNC_HEALTHS.map((health) => (
            <option key={health} value={health}>
              {SYNC_HEALTH_LABEL[health]}
            </option>
          ))}
        </select>
      </label>
      <label className="text-xs font-medium text-slate-600">
        Sort by
        <select name="sort" defaultValue={query.sort} className={fieldClass}>
          {SORTS.map((sort) => (
            <option key={sort} value={sort}>
              {SORT_LABEL[sort]}
            </option>
          ))}
        </select>
      </label>
      <input type="hidden" name="perPage" value={query.perPage} />
      <div className="col-span-2 flex items-end gap-3 sm:col-span-3 lg:col-span-6">
        <button type="submit" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
          Apply
        </button>
        <Link href="/admin" className="py-1.5 text-sm text-brand-700 hover:underline">
          Clear
        </Link>
      </div>
    </form>
  );
}
