// GET /dashboard/sessions/export: the sessions list, with the page's filters, as a CSV download.
// A route handler is not under the dashboard's layout, so it checks the operator's session itself:
// no session, no data (401), whatever the query says; the install must be active, as for the pages.
import { currentOperator } from "@/lib/auth/operator-session";
import { readDashboardConfig } from "@/lib/dashboard/config";
import { loadFreshness } from "@/lib/dashboard/freshness";
import { parseSessionQuery, sessionsCsvStream } from "@/lib/dashboard/sessions";
import { loadDashboardInstall, showsLocalCopy } from "@/lib/installs/dashboard";

export const dynamic = "force-dynamic";

function refuse(status: number, message: string) {
  return new Response(`${message}\n`, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" } });
}

export async function GET(request: Request) {
  const operator = await currentOperator();
  if (!operator) return refuse(401, "Sign in from the operator portal to export sessions.");
  const install = await loadDashboardInstall(operator.installRowId);
  // The copy, as the pages show it: also while re-authorization is pending (read-only, A132).
  if (!install || !showsLocalCopy(install.status)) return refuse(403, "This install is not active, so the app shows none of its data.");
  if (!readDashboardConfig(install.config).syncCharges) return refuse(409, "Sessions are not imported for this install (its configuration says not to).");
  const { charges } = await loadFreshness(install.id);
  if (!charges.asOf) return refuse(409, "Sessions are still being copied from the service; export them once the copy is complete.");

  // The same filters as the page (a malformed one falls back to "no filter"); page and perPage are ignored: the export is the whole list.
  const query = parseSessionQuery(new URL(request.url).searchParams);
  const day = charges.asOf.toISOString().slice(0, 10);
  return new Response(sessionsCsvStream(install.id, query), {
    headers: {
      "Content-Type": "text/csv; charset=utf-8; header=present",
      "Content-Disposition": `attachment; filename="sessions-${day}.csv"`,
      "Cache-Control": "no-store",
    },
  });
}
