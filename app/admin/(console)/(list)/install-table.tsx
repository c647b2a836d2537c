// The install list's table, its empty states and its pages. On a phone the operator and the health
// words move under the install and the state, so the page never scrolls sideways.
import Link from "next/link";
import { DataTable } from "@/app/components/data-table";
import { PageSizeLinks, Pagination, rangeText } from "@/app/dashboard/_components/pagination";
import { PER_PAGE_CHOICES, type InstallList, type InstallListItem, type InstallListQuery } from "@/lib/admin/install-list";
import { formatDistance, formatTime } from "../../format";
import { InstallRow, type InstallRowView, type Shown } from "./install-row";
import { installListHref } from "./list-href";

export function InstallTable({ list, query }: { list: InstallList; query: InstallListQuery }) {
  if (list.total === 0) {
    return (
      <EmptyState testId="installs-empty" title="No installs yet">
        Operators install the app from the service&apos;s operator portal; each install appears here.
      </EmptyState>
    );
  }
  return (
    <section className="space-y-3">
      <div className="flex flex-wrap items-baseline justify-between gap-2 text-sm">
        <p className="text-slate-600" data-testid="install-range">
          {rangeText(list.page, list.perPage, list.items.length, list.matching)}
        </p>
        <p className="text-xs text-slate-500">Times in UTC; hover a time for the exact value.</p>
      </div>
      {list.items.length === 0 ? (
        <EmptyState testId="installs-no-match" title="No install matches">
          Try another search, or fewer filters.{" "}
          {/* Underlined: a link inside a sentence must not be told apart by its colour alone (WCAG 1.4.1). */}
          <Link href="/admin" className="text-brand-700 underline">
            Clear them
          </Link>
          .
        </EmptyState>
      ) : (
        <DataTable
          label="Installs"
          testId="installs"
          columns={[
            { label: "Install" },
            { label: "Operator", className: "hidden md:table-cell" },
            { label: "State" },
            { label: "Tokens", className: "hidden sm:table-cell" },
            { label: "Sync", className: "hidden sm:table-cell" },
            { label: "Created", className: "hidden lg:table-cell" },
          ]}
        >
          {list.items.map((install) => (
            <InstallRow key={install.id} row={rowView(install, list.asOf)} />
          ))}
        </DataTable>
      )}
      <PageSizeLinks choices={PER_PAGE_CHOICES} current={list.perPage} hrefFor={(perPage) => installListHref(query, { perPage, page: 0 })} />
      <Pagination page={list.page} perPage={list.perPage} total={list.matching} hrefFor={(page) => installListHref(query, { page })} />
    </section>
  );
}

function operatorLabel(install: InstallListItem): string {
  return install.operatorName ?? `Operator ${install.operatorId}`;
}

/** A time in words from `now` (`access in 55 min`), with its exact value on hover. */
function shown(prefix: string, at: Date, now: Date): Shown {
  return { text: `${prefix} ${formatDistance(at, now)}`, title: formatTime(at) };
}

/**
 * What the row shows, written here on the server with the page's one `now` (./install-row.tsx says
 * why the row takes strings): nothing of the install that the row does not show.
 */
function rowView(install: InstallListItem, now: Date): InstallRowView {
  const { accessTokenExpiresAt: access, refreshTokenExpiresAt: refresh, refreshStartedAt, syncedAt, lastSyncRunAt } = install;
  return {
    id: install.id,
    install: install.installId === null ? "pending" : String(install.installId),
    slug: install.slug,
    operatorName: install.operatorName,
    operatorLabel: operatorLabel(install),
    operatorId: install.operatorId,
    status: install.status,
    since: { text: `since ${formatTime(install.statusChangedAt).slice(0, 10)}`, title: formatTime(install.statusChangedAt) },
    created: { text: formatTime(install.createdAt).slice(0, 16), title: formatTime(install.createdAt) },
    tokenHealth: install.tokenHealth,
    refreshUnknown: refreshStartedAt ? `refresh outcome unknown since ${formatTime(refreshStartedAt)}` : null,
    access: access ? shown(access <= now ? "access expired" : "access", access, now) : null,
    refresh: access && refresh ? shown(refresh <= now ? "refresh expired" : "refresh", refresh, now) : null,
    syncHealth: install.syncHealth,
    complete: syncedAt ? shown("complete as of", syncedAt, now) : null,
    lastRun: install.syncHealth === "failing" && lastSyncRunAt ? shown("last run", lastSyncRunAt, now) : null,
  };
}

function EmptyState({ testId, title, children }: { testId: string; title: string; children: React.ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-center" data-testid={testId}>
      <p className="font-medium">{title}</p>
      <p className="mt-1 text-sm text-slate-600">{children}</p>
    </div>
  );
}
