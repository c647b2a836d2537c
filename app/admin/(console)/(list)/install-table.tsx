// The install list's table, its empty states and its pages. On a phone the operator and the health
// words move under the install and the state, so the page never scrolls sideways.
import Link from "next/link";
import { DataTable } from "@/app/components/data-table";
import { PageSizeLinks, Pagination, rangeText } from "@/app/dashboard/_components/pagination";
import { PER_PAGE_CHOICES, type InstallList, type InstallListItem, type InstallListQuery } from "@/lib/admin/install-list";
import { formatTime } from "../../format";
import { StatusBadge } from "../../status-badge";
import { SYNC_HEALTH_LABEL, SyncHealthWords, TOKEN_HEALTH_LABEL, TokenHealthWords } from "./health-words";
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
            <InstallRow key={install.id} install={install} now={list.asOf} />
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

function InstallRow({ install, now }: { install: InstallListItem; now: Date }) {
  return (
    <tr data-install-row={install.id}>
      <td className="px-3 py-2">
        <Link href={`/admin/installs/${install.id}`} className="font-mono text-brand-700 hover:underline" data-testid="install-link">
          {install.installId ?? "pending"}
        </Link>
        {install.slug ? (
          <div className="break-words text-xs text-slate-600" data-testid="install-slug">
            {install.slug}
          </div>
        ) : null}
        {/* On phones: the operator here, its column is hidden. */}
        <div className="break-words text-xs text-slate-700 md:hidden">{operatorLabel(install)}</div>
      </td>
      <td className="hidden px-3 py-2 md:table-cell">
        {install.operatorName ? <div className="break-words">{install.operatorName}</div> : null}
        <div className="font-mono text-xs text-slate-500" data-testid="operator-id">
          {install.operatorId}
        </div>
      </td>
      <td className="px-3 py-2">
        <StatusBadge status={install.status} />
        <div className="mt-1 text-xs text-slate-500" title={formatTime(install.statusChangedAt)}>
          since {formatTime(install.statusChangedAt).slice(0, 10)}
        </div>
        {/* On phones: the health words here, their columns are hidden. */}
        <div className="mt-1 space-y-0.5 text-xs sm:hidden">
          <div>Tokens: {TOKEN_HEALTH_LABEL[install.tokenHealth]}</div>
          <div>Sync: {SYNC_HEALTH_LABEL[install.syncHealth]}</div>
        </div>
      </td>
      <td className="hidden px-3 py-2 sm:table-cell">
        <TokenHealthWords install={install} now={now} />
      </td>
      <td className="hidden px-3 py-2 sm:table-cell">
        <SyncHealthWords install={install} now={now} />
      </td>
      <td className="hidden whitespace-nowrap px-3 py-2 lg:table-cell" title={formatTime(install.createdAt)}>
        {formatTime(install.createdAt).slice(0, 16)}
      </td>
    </tr>
  );
}

function EmptyState({ testId, title, children }: { testId: string; title: string; children: React.ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-center" data-testid={testId}>
      <p className="font-medium">{title}</p>
      <p className="mt-1 text-sm text-slate-600">{children}</p>
    </div>
  );
}
