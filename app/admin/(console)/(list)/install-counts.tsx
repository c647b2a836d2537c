// The counts per state: every install, and, while a search or filter is on, how many of them match.
import { INSTALL_STATUSES } from "@/lib/admin/queries";
import type { InstallList } from "@/lib/admin/install-list";
import { StatusBadge } from "../../status-badge";

const count = (n: number) => n.toLocaleString("en-GB");

export function InstallCounts({ list }: { list: InstallList }) {
  return (
    <section aria-label="Installs by status" className="space-y-2">
      <div className="flex flex-wrap items-baseline gap-x-3">
        <h1 className="text-xl font-semibold">Installs</h1>
        <p className="text-sm text-slate-600">
          <span data-testid="count-total">{count(list.total)}</span> in all
          {list.filtered ? (
            <>
              {"; "}
              <span data-testid="count-matching">{count(list.matching)}</span> match the search and filters
            </>
          ) : null}
        </p>
      </div>
      {/* On a phone, one line per state (a two-column grid is too narrow for the longest label). */}
      <div className="grid grid-cols-1 gap-2 sm:grid-cols-2 sm:gap-3 md:grid-cols-4">
        {INSTALL_STATUSES.map((status) => (
          <div key={status} className="flex items-center gap-3 rounded-lg border border-slate-200 bg-white px-4 py-2 sm:block sm:p-4">
            <div className="text-xl font-semibold sm:text-2xl" data-testid={`count-${status}`}>
              {count(list.counts[status].all)}
            </div>
            <StatusBadge status={status} />
            {list.filtered ? (
              <div className="ml-auto text-xs text-slate-500 sm:mt-1" data-testid={`matching-${status}`}>
                {count(list.counts[status].matching)} matching
              </div>
            ) : null}
          </div>
        ))}
      </div>
    </section>
  );
}
