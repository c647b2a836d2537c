// Token health and sync health in words (their definitions: lib/admin/install-list.ts), with the
// times behind them; the tone says at a glance which ones need a person.
import type { InstallListItem, InstallSort, SyncHealth, TokenHealth } from "@/lib/admin/install-list";
import { formatDistance, formatTime } from "../../format";

export const TOKEN_HEALTH_LABEL: Record<TokenHealth, string> = {
  healthy: "Healthy",
  access_expired: "Access token expired",
  refresh_expiring: "Refresh token expiring",
  refresh_unknown: "Refresh outcome unknown",
  no_grant: "No tokens",
};

export const SYNC_HEALTH_LABEL: Record<SyncHealth, string> = {
  up_to_date: "Up to date",
  lagging: "Lagging",
  failing: "Failing",
  never: "Never synced",
  paused: "Paused (install not active)",
};

export const SORT_LABEL: Record<InstallSort, string> = {
  newest: "Newest first",
  oldest: "Oldest first",
  operator: "Operator (A–Z)",
  changed: "State changed (latest first)",
  expiry: "Token expiry (soonest first)",
  synced: "Last sync (stalest first)",
};

const TOKEN_TONE: Record<TokenHealth, string> = {
  healthy: "text-emerald-800",
  // Normal between uses: the next call refreshes it (lib/oauth/access.ts).
  access_expired: "text-slate-700",
  refresh_expiring: "text-amber-800",
  refresh_unknown: "text-amber-800",
  no_grant: "text-slate-500",
};

const SYNC_TONE: Record<SyncHealth, string> = {
  up_to_date: "text-emerald-800",
  lagging: "text-amber-800",
  failing: "text-red-700",
  never: "text-slate-700",
  paused: "text-slate-500",
};

function When({ at, now, prefix }: { at: Date; now: Date; prefix: string }) {
  return (
    <span title={formatTime(at)}>
      {prefix} {formatDistance(at, now)}
    </span>
  );
}

export function TokenHealthWords({ install, now }: { install: InstallListItem; now: Date }) {
  const { tokenHealth, accessTokenExpiresAt, refreshTokenExpiresAt, refreshStartedAt } = install;
  return (
    <div data-token-health={tokenHealth}>
      <span className={`font-medium ${TOKEN_TONE[tokenHealth]}`}>{TOKEN_HEALTH_LABEL[tokenHealth]}</span>
      {refreshStartedAt ? (
        // lib/oauth/refresh.ts: the refresh token may already be spent; nothing re-sends it blindly.
        <span className="block text-xs font-medium text-amber-800" data-testid="refresh-unknown">
          refresh outcome unknown since {formatTime(refreshStartedAt)}
        </span>
      ) : null}
      {accessTokenExpiresAt ? (
        <span className="block text-xs text-slate-500">
          <When at={accessTokenExpiresAt} now={now} prefix={accessTokenExpiresAt <= now ? "access expired" : "access"} />
          {refreshTokenExpiresAt ? (
            <>
              {" · "}
              <When at={refreshTokenExpiresAt} now={now} prefix={refreshTokenExpiresAt <= now ? "refresh expired" : "refresh"} />
            </>
          ) : null}
        </span>
      ) : null}
    </div>
  );
}

export function SyncHealthWords({ install, now }: { install: InstallListItem; now: Date }) {
  const { syncHealth, syncedAt, lastSyncRunAt } = install;
  return (
    <div data-sync-health={syncHealth}>
      <span className={`font-medium ${SYNC_TONE[syncHealth]}`}>{SYNC_HEALTH_LABEL[syncHealth]}</span>
      {syncedAt ? (
        <span className="block text-xs text-slate-500">
          <When at={syncedAt} now={now} prefix="complete as of" />
        </span>
      ) : null}
      {syncHealth === "failing" && lastSyncRunAt ? (
        <span className="block text-xs text-slate-500">
          <When at={lastSyncRunAt} now={now} prefix="last run" />
        </span>
      ) : null}
    </div>
  );
}
