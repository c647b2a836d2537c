// The list's address for a query: the keys left at their defaults are left out, so links stay short.
import { DEFAULT_QUERY, type InstallListQuery } from "@/lib/admin/install-list";
import { queryString } from "@/app/dashboard/_components/pagination";

export function installListHref(query: InstallListQuery, change: Partial<InstallListQuery> = {}): string {
  const next = { ...query, ...change };
  return `/admin${queryString(
    { q: next.q, state: next.state, token: next.token, sync: next.sync, sort: next.sort, page: next.page, perPage: next.perPage },
    { q: DEFAULT_QUERY.q, sort: DEFAULT_QUERY.sort, page: DEFAULT_QUERY.page, perPage: DEFAULT_QUERY.perPage },
  )}`;
}
