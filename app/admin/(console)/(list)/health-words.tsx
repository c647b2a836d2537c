// Token health and sync health in words (their definitions: lib/admin/install-list.ts); the tone says
// at a glance which ones need a person. The row that shows them with their times: ./install-row.tsx.
import type { InstallSort, SyncHealth, TokenHealth } from "@/lib/admin/install-list";

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

export const TOKEN_TONE: Record<TokenHealth, string> = {
  healthy: "text-emerald-800",
  // Normal between uses: the next call refreshes it (lib/oauth/access.ts).
  access_expired: "text-slate-700",
  refresh_expiring: "text-amber-800",
  refresh_unknown: "text-amber-800",
  no_grant: "text-slate-500",
};

export const SYNC_TONE: Record<SyncHealth, string> = {
  up_to_date: "text-emerald-800",
  lagging: "text-amber-800",
  failing: "text-red-700",
  never: "text-slate-700",
  paused: "text-slate-500",
};
