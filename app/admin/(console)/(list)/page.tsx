// GET /admin: the app's installs, a page at a time, with a search box, filters (state, token health,
// sync health) and sorts, all in the address (lib/admin/install-list.ts reads them; a bad value
// falls back to its default). The counts per state at the top cover every install.
//
// The page lives in a route group, "(list)", so its loading skeleton wraps this page alone (see
// loading.tsx).
import type { Metadata } from "next";
import { fetchInstallList, parseInstallListQuery } from "@/lib/admin/install-list";
import { requireStaff } from "@/lib/auth/staff";
import { CircuitBanner } from "../../circuit-banner";
import { RetentionLine } from "../../retention-line";
import { InstallCounts } from "./install-counts";
import { InstallFilters } from "./install-filters";
import { InstallTable } from "./install-table";

export const metadata: Metadata = { title: "Installs · Staff console" };

export const dynamic = "force-dynamic";

export default async function InstallsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requireStaff();
  const query = parseInstallListQuery(await searchParams);
  const list = await fetchInstallList(query);

  return (
    <div className="space-y-6">
      <CircuitBanner />
      <InstallCounts list={list} />
      {list.total > 0 ? <InstallFilters query={query} /> : null}
      <InstallTable list={list} query={query} />
      <RetentionLine />
    </div>
  );
}
