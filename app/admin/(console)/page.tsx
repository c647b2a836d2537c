// /admin: every install of the app, newest first, with its status and the state of its tokens.
import { DataTable } from "@/app/components/data-table";
import Link from "next/link";
import { fetchInstallOverview, INSTALL_LIST_LIMIT, INSTALL_STATUSES, type GrantTiming } from "@/lib/admin/queries";
import { requireStaff } from "@/lib/auth/staff";
import { CircuitBanner } from "../circuit-banner";
import { formatDistance, formatTime } from "../format";
import { StatusBadge } from "../status-badge";

export const dynamic = "force-dynamic";

function Expiry({ at, now }: { at: Date | null; now: Date }) {
  if (!at) return <span className="text-slate-400">—</span>;
  const expired = at <= now;
  return (
    <span title={formatTime(at)} className={expired ? "text-red-700" : undefined}>
      {expired ? `expired ${formatDistance(at, now)}` : formatDistance(at, now)}
    </span>
  );
}

function RefreshState({ grant, now }: { grant: GrantTiming; now: Date }) {
  return (
    <>
      <span title={grant.lastRefreshedAt ? formatTime(grant.lastRefreshedAt) : undefined}>
        {grant.lastRefreshedAt ? formatDistance(grant.lastRefreshedAt, now) : "never"}
      </span>
      {grant.refreshStartedAt ? (
        // lib/oauth/refresh.ts: the refresh token may already be spent; nothing re-sends it blindly.
        <span className="mt-1 block text-xs font-medium text-amber-800" data-testid="refresh-unknown">
          refresh outcome unknown since {formatTime(grant.refreshStartedAt)}
        </span>
      ) : null}
    </>
  );
}

export default async function InstallsPage() {
  await requireStaff();
  const { installs, counts, total, asOf } = await fetchInstallOverview();

  return (
    <div className="space-y-6">
      <CircuitBanner />

      <section aria-label="Installs by status" className="space-y-2">
        <div className="flex items-baseline gap-3">
          <h1 className="text-xl font-semibold">Installs</h1>
          <p className="text-sm text-slate-600">
            <span data-testid="count-total">{total}</span> in all
          </p>
        </div>
        <div className="grid grid-cols-2 gap-3 md:grid-cols-4">
          {INSTALL_STATUSES.map((status) => (
            <div key={status} className="rounded-lg border border-slate-200 bg-white p-4">
              <div className="text-2xl font-semibold" data-testid={`count-${status}`}>
                {counts[status]}
              </div>
              <StatusBadge status={status} />
            </div>
          ))}
        </div>
      </section>

      <section className="space-y-2">
        <p className="text-right text-xs text-slate-500">
          {total > installs.length ? `Newest ${INSTALL_LIST_LIMIT} of ${total}, newest first. ` : "Newest first. "}Times in UTC; hover a time for the
          exact value.
        </p>
        <DataTable
          columns={["Install", "Operator", "Status", "Scopes", "Access token", "Refresh token", "Last refreshed", "Created"]}
          testId="installs"
        >
          {installs.length === 0 ? (
            <tr>
              <td colSpan={8} className="px-3 py-6 text-center text-slate-500">
                No installs yet. Operators install the app from the service&apos;s operator portal.
              </td>
            </tr>
          ) : null}
          {installs.map((install) => (
            <tr key={install.id} data-install-row={install.id}>
              <td className="px-3 py-2">
                <Link href={`/admin/installs/${install.id}`} className="font-mono text-brand-700 hover:underline" data-testid="install-link">
                  {install.installId ?? "pending"}
                </Link>
                {install.slug ? <div className="text-xs text-slate-500">{install.slug}</div> : null}
              </td>
              <td className="px-3 py-2 font-mono" data-testid="operator-id">
                {install.operatorId}
              </td>
              <td className="px-3 py-2">
                <StatusBadge status={install.status} />
              </td>
              <td className="px-3 py-2 text-xs">{install.grantedScopes.join(" ") || "none"}</td>
              {install.grant ? (
                <>
                  <td className="px-3 py-2 whitespace-nowrap">
                    <Expiry at={install.grant.accessTokenExpiresAt} now={asOf} />
                  </td>
                  <td className="px-3 py-2 whitespace-nowrap">
                    <Expiry at={install.grant.refreshTokenExpiresAt} now={asOf} />
                  </td>
                  <td className="px-3 py-2">
                    <RefreshState grant={install.grant} now={asOf} />
                  </td>
                </>
              ) : (
                <td colSpan={3} className="px-3 py-2 text-slate-500">
                  no tokens
                </td>
              )}
              <td className="px-3 py-2 whitespace-nowrap" title={formatTime(install.createdAt)}>
                {formatTime(install.createdAt).slice(0, 16)}
              </td>
            </tr>
          ))}
        </DataTable>
      </section>
    </div>
  );
}
