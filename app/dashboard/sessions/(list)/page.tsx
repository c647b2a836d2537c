// GET /dashboard/sessions: the install's charging sessions (charges) from its local copy, newest
// first, filtered by a date range and a charge point (lib/dashboard/sessions.ts), with a CSV export
// of the same list. Before the copy exists the page says why there is nothing yet; the reasons are
// checked in the order an operator can act on them.
// In a route group, "(list)", for the same reason as the charge points list: see that page.
import { dashboardI18n } from "@/lib/i18n/request";
import { sessionsTranslator } from "../i18n";
import type { Metadata } from "next";
import { currentOperator } from "@/lib/auth/operator-session";
import { listChargePointChoices } from "@/lib/dashboard/charge-points";
import { readDashboardConfig } from "@/lib/dashboard/config";
import { loadFreshness } from "@/lib/dashboard/freshness";
import { listSessions, parseSessionQuery } from "@/lib/dashboard/sessions";
import { loadDashboardInstall } from "@/lib/installs/dashboard";
import { resourceShared } from "@/lib/sync/resources";
import { SessionTable, SessionsUnavailable } from "../session-table";

export async function generateMetadata(): Promise<Metadata> {
  return { title: sessionsTranslator((await dashboardI18n()).locale)("sessions.title") };
}

export const dynamic = "force-dynamic";

export default async function SessionsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install) return null;

  const config = readDashboardConfig(install.config);
  if (!config.syncCharges) return <SessionsUnavailable reason="not_imported" />;
  if (!resourceShared("charges", install.grantedScopes)) return <SessionsUnavailable reason="not_granted" />;
  const { charges: freshness } = await loadFreshness(install.id);
  // Only an ACTIVE install's copy moves: while re-authorization is pending, nothing would ever arrive.
  if (!freshness.asOf) return <SessionsUnavailable reason="being_copied" updating={install.status === "ACTIVE"} />;

  const query = parseSessionQuery(params);
  const [list, chargePoints] = await Promise.all([listSessions(install.id, query), listChargePointChoices(install.id)]);
  return <SessionTable list={list} query={query} chargePoints={chargePoints} asOf={freshness.asOf} reportingCurrency={config.currency} />;
}
