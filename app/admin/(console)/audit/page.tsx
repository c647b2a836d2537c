// /admin/audit: the staff console's audit log (lib/admin/audit.ts), newest first, 50 lines a page,
// filterable by install (its install_id or row id) and by staff member (email). Viewers see it too.
import type { Metadata } from "next";
import Link from "next/link";
import { DataTable } from "@/app/components/data-table";
import { KeysetPages } from "@/app/components/keyset-pages";
import { ACTION_LABEL, CONSOLE_ACTIONS, PENDING, fetchAuditPage, readAuditQuery, type AuditQuery } from "@/lib/admin/audit";
import { requireStaff } from "@/lib/auth/staff";
import { formatTime } from "../../format";

export const metadata: Metadata = { title: "Audit log · Staff console" };

export const dynamic = "force-dynamic";

const actionLabel = (action: string) => (CONSOLE_ACTIONS as readonly string[]).includes(action) ? ACTION_LABEL[action as keyof typeof ACTION_LABEL] : action;

/** The page's address for these filters and cursor, without empty keys. */
function auditHref(query: { install?: string; staff?: string; after?: string }): string {
  const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => !!entry[1]));
  const text = params.toString();
  return text ? `/admin/audit?${text}` : "/admin/audit";
}

/** The filter values as typed back into the form (the install as it was given). */
function filterValues(query: AuditQuery): { install?: string; staff?: string } {
  const install = query.install?.installId !== undefined ? String(query.install.installId) : query.install?.installRowId;
  return { install, staff: query.staff };
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requireStaff();
  const query = readAuditQuery(await searchParams);
  const { lines, next } = await fetchAuditPage(query);
  const filters = filterValues(query);
  const filtered = !!(filters.install || filters.staff);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 className="text-xl font-semibold">Audit log</h1>
        <p className="text-sm text-slate-600">Every console action staff attempted, refused ones included. Newest first; times in UTC.</p>
      </div>

      <form method="get" action="/admin/audit" className="flex flex-wrap items-end gap-3 text-sm" role="search">
        <label className="flex min-w-0 flex-col gap-1">
          <span className="text-slate-600">Install (install_id or row id)</span>
          <input name="install" defaultValue={filters.install ?? ""} maxLength={100} className="w-64 max-w-full rounded-md border border-slate-300 px-2 py-1" />
        </label>
        <label className="flex min-w-0 flex-col gap-1">
          <span className="text-slate-600">Staff member (email)</span>
          <input name="staff" type="email" defaultValue={filters.staff ?? ""} maxLength={254} className="w-64 max-w-full rounded-md border border-slate-300 px-2 py-1" />
        </label>
        <button type="submit" className="rounded-md border border-slate-300 bg-white px-3 py-1 font-medium hover:bg-slate-50">
          Filter
        </button>
        {filtered ? (
          <Link href="/admin/audit" className="py-1 text-brand-700 hover:underline">
            Clear
          </Link>
        ) : null}
      </form>

      <DataTable
          label="Audit log"
        columns={["When, who", "Action", { label: "Install", className: "hidden sm:table-cell" }, { label: "Outcome", className: "hidden md:table-cell" }]}
        testId="audit"
      >
        {lines.length === 0 ? (
          <tr>
            <td colSpan={4} className="px-3 py-6 text-center text-slate-500" data-testid="audit-empty">
              {filtered || query.after ? "No actions match." : "No staff action yet. Actions taken on an install's page are listed here."}
            </td>
          </tr>
        ) : null}
        {lines.map((line) => (
          <tr key={line.id} data-audit-line={line.id} data-outcome={line.outcome}>
            <td className="px-3 py-2">
              <div className="text-xs whitespace-nowrap sm:text-sm">{formatTime(line.requestedAt)}</div>
              <Link href={auditHref({ staff: line.staffEmail })} className="text-xs break-all text-brand-700 hover:underline" data-testid="audit-staff">
                {line.staffEmail}
              </Link>
              <span className="ml-1 text-xs text-slate-500">({line.staffRole})</span>
            </td>
            <td className="px-3 py-2">
              {actionLabel(line.action)}
              {/* On small screens the install and outcome columns step aside; they stay under the action. */}
              {line.installRowId ? (
                <div className="text-xs sm:hidden">
                  <Link href={`/admin/installs/${line.installRowId}`} className="text-brand-700 hover:underline">
                    Install {line.installId ?? "pending"}
                  </Link>
                </div>
              ) : null}
              <div className="mt-1 text-xs text-slate-600 md:hidden">{line.detail}</div>
            </td>
            <td className="hidden px-3 py-2 sm:table-cell">
              {line.installRowId ? (
                <Link href={`/admin/installs/${line.installRowId}`} className="font-mono text-brand-700 hover:underline">
                  {line.installId ?? "pending"}
                </Link>
              ) : (
                <span className="text-slate-500">—</span>
              )}
            </td>
            <td className="hidden px-3 py-2 md:table-cell">
              <span className="font-mono text-xs">{line.outcome === PENDING ? "pending (outcome not recorded)" : line.outcome}</span>
              <div className="text-slate-700">{line.detail}</div>
            </td>
          </tr>
        ))}
      </DataTable>

      <KeysetPages olderHref={next ? auditHref({ ...filters, after: next }) : null} newestHref={query.after ? auditHref(filters) : null} testId="audit" />
    </div>
  );
}
