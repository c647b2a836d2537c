// GET /dashboard/charge-points: the install's charge points. From the local copy once the sync's
// first pass over them has ended (search, filters, sort, pages: lib/dashboard/charge-points.ts);
// until then, live from the API, which offers pages only (live-charge-points.tsx).
//
// The page lives in a route group, "(list)", so its loading skeleton wraps this page alone: the
// detail page ([id]) must answer 404 for an unknown id, and a page streamed behind a loading
// boundary has already sent its 200 by the time it knows.
import { dashboardI18n } from "@/lib/i18n/request";
import type { Metadata } from "next";
import { currentOperator } from "@/lib/auth/operator-session";
import { listChargePoints, loadFilterOptions, parseChargePointQuery } from "@/lib/dashboard/charge-points";
import { loadFreshness } from "@/lib/dashboard/freshness";
import { loadDashboardInstall } from "@/lib/installs/dashboard";
import { ChargePointTable } from "../charge-point-table";
import { LiveChargePoints, parseLiveQuery } from "../live-charge-points";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await dashboardI18n()).t("nav.chargePoints") };
}

export const dynamic = "force-dynamic";

export default async function ChargePointsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  // The layout renders pages only for a signed-in operator with an active install; re-read both here
  // because a page must not rely on its layout for authorization.
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install) return null;

  const { charge_points: freshness } = await loadFreshness(install.id);
  if (!freshness.asOf) return <LiveChargePoints install={install} query={parseLiveQuery(params)} />;

  const query = parseChargePointQuery(params);
  // The sites' names in the filter are worded in the operator's language (lib/i18n/request.ts).
  const { t } = await dashboardI18n();
  const [list, options] = await Promise.all([listChargePoints(install.id, query), loadFilterOptions(install.id, t)]);
  return <ChargePointTable list={list} options={options} query={query} asOf={freshness.asOf} />;
}
