"use client";
// One row of the install list. A client component only so that the page sends each row as the few
// strings it shows (InstallRowView, made on the server by install-table.tsx) instead of as a tree of
// elements: a server component's markup reaches the browser twice, once as HTML and once in the React
// payload the page carries, and with every class name. Here the payload holds the strings once; the
// markup is built from them on the server for the HTML and again in the browser. Every text, time
// and distance is already written on the server (with the page's one `now`), so the browser renders
// exactly the HTML it was sent.
import Link from "next/link";
import type { InstallStatus } from "@/lib/db/generated/enums";
import type { SyncHealth, TokenHealth } from "@/lib/admin/install-list";
import { StatusBadge } from "../../status-badge";
import { SYNC_HEALTH_LABEL, SYNC_TONE, TOKEN_HEALTH_LABEL, TOKEN_TONE } from "./health-words";

/** A time as the row shows it: the words, and the exact UTC time on hover. */
export type Shown = { text: string; title: string };

/** What one row shows, and nothing else. */
export type InstallRowView = {
  id: string;
  /** The install id, or "pending". */
  install: string;
  slug: string | null;
  operatorName: string | null;
  /** The name, or "Operator <id>" without one (the phone layout's line). */
  operatorLabel: string;
  operatorId: string;
  status: InstallStatus;
  since: Shown;
  created: Shown;
  tokenHealth: TokenHealth;
  /** "refresh outcome unknown since <time>", when a refresh's outcome is unknown. */
  refreshUnknown: string | null;
  access: Shown | null;
  refresh: Shown | null;
  syncHealth: SyncHealth;
  complete: Shown | null;
  lastRun: Shown | null;
};

function When({ at }: { at: Shown }) {
  return <span title={at.title}>{at.text}</span>;
}

export function InstallRow({ row }: { row: InstallRowView }) {
  return (
    <tr data-install-row={row.id}>
      <td className="px-3 py-2">
        {/* No prefetch: a list of 25 to 100 links would ask the server for as many install pages per view. */}
        <Link href={`/admin/installs/${row.id}`} prefetch={false} className="font-mono text-brand-700 hover:underline" data-testid="install-link">
          {row.install}
        </Link>
        {row.slug ? (
          <div className="break-words text-xs text-slate-600" data-testid="install-slug">
            {row.slug}
          </div>
        ) : null}
        {/* On phones: the operator here, its column is hidden. */}
        <div className="break-words text-xs text-slate-700 md:hidden">{row.operatorLabel}</div>
      </td>
      <td className="hidden px-3 py-2 md:table-cell">
        {row.operatorName ? <div className="break-words">{row.operatorName}</div> : null}
        <div className="font-mono text-xs text-slate-500" data-testid="operator-id">
          {row.operatorId}
        </div>
      </td>
      <td className="px-3 py-2">
        <StatusBadge status={row.status} />
        <div className="mt-1 text-xs text-slate-500" title={row.since.title}>
          {row.since.text}
        </div>
        {/* On phones: the health words here, their columns are hidden. */}
        <div className="mt-1 space-y-0.5 text-xs sm:hidden">
          <div>{`Tokens: ${TOKEN_HEALTH_LABEL[row.tokenHealth]}`}</div>
          <div>{`Sync: ${SYNC_HEALTH_LABEL[row.syncHealth]}`}</div>
        </div>
      </td>
      <td className="hidden px-3 py-2 sm:table-cell">
        <div data-token-health={row.tokenHealth}>
          <span className={`font-medium ${TOKEN_TONE[row.tokenHealth]}`}>{TOKEN_HEALTH_LABEL[row.tokenHealth]}</span>
          {row.refreshUnknown ? (
            // lib/oauth/refresh.ts: the refresh token may already be spent; nothing re-sends it blindly.
            <span className="block text-xs font-medium text-amber-800" data-testid="refresh-unknown">
              {row.refreshUnknown}
            </span>
          ) : null}
          {row.access ? (
            <span className="block text-xs text-slate-500">
              <When at={row.access} />
              {row.refresh ? (
                <>
                  {" · "}
                  <When at={row.refresh} />
                </>
              ) : null}
            </span>
          ) : null}
        </div>
      </td>
      <td className="hidden px-3 py-2 sm:table-cell">
        <div data-sync-health={row.syncHealth}>
          <span className={`font-medium ${SYNC_TONE[row.syncHealth]}`}>{SYNC_HEALTH_LABEL[row.syncHealth]}</span>
          {row.complete ? (
            <span className="block text-xs text-slate-500">
              <When at={row.complete} />
            </span>
          ) : null}
          {row.lastRun ? (
            <span className="block text-xs text-slate-500">
              <When at={row.lastRun} />
            </span>
          ) : null}
        </div>
      </td>
      <td className="hidden whitespace-nowrap px-3 py-2 lg:table-cell" title={row.created.title}>
        {row.created.text}
      </td>
    </tr>
  );
}
