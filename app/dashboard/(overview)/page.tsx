// GET /dashboard: the Overview. What an operator wants first (energy and sessions per day, revenue,
// charge points by state) over a range in the URL, read from the install's local copy (lib/sync),
// never from the API: fast, no request from the install's rate budget, and still there while the
// service is down. The page says how fresh the copy is ("as of").
import type { Metadata } from "next";
import { currentOperator } from "@/lib/auth/operator-session";
import { loadOverview, parseRangeQuery } from "@/lib/dashboard/overview";
import { loadDashboardInstall, showsLocalCopy } from "@/lib/installs/dashboard";
import { dashboardI18n } from "@/lib/i18n/request";
import { OverviewView } from "./_overview/overview-view";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await dashboardI18n()).t("nav.overview") };
}

export const dynamic = "force-dynamic";

export default async function OverviewPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  // A page must not rely on its layout for authorization: re-read the operator and the install.
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install || !showsLocalCopy(install.status)) return null;

  const choice = parseRangeQuery(await searchParams);
  // The days are the operator's (docs/spec-gaps.md A153): grouped in their zone, as the page labels them.
  const overview = await loadOverview(install, choice, new Date(), (await dashboardI18n()).timeZone);
  // Only an ACTIVE install's copy moves; while re-authorization is pending it is shown as it is.
  return <OverviewView overview={overview} choice={choice} updating={install.status === "ACTIVE"} />;
}
