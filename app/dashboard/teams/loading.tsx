// Shown while the Teams page reads the local copy (streaming): the page's shape, no data.
import { dashboardI18n } from "@/lib/i18n/request";
import { teamsTranslator } from "./i18n";

export default async function TeamsLoading() {
  const t = teamsTranslator((await dashboardI18n()).locale);
  return (
    <section className="space-y-4" aria-busy="true" aria-label={t("teams.loading")}>
      <div className="h-7 w-32 animate-pulse rounded bg-slate-200" />
      <ul className="divide-y divide-slate-100 rounded-lg border border-slate-200 bg-white">
        {[0, 1, 2].map((i) => (
          <li key={i} className="flex items-center justify-between p-4">
            <div className="h-4 w-40 animate-pulse rounded bg-slate-200" />
            <div className="h-4 w-20 animate-pulse rounded bg-slate-100" />
          </li>
        ))}
      </ul>
    </section>
  );
}
