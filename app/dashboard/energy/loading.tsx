// Shown while the Energy page asks the service (a live read: it can take a few seconds).
import { dashboardI18n } from "@/lib/i18n/request";
import { energyTranslator } from "./i18n";

export default async function EnergyLoading() {
  const t = energyTranslator((await dashboardI18n()).locale);
  return (
    <section className="space-y-4" aria-busy="true" aria-label={t("energy.loading")}>
      <div className="h-7 w-32 animate-pulse rounded bg-slate-200" />
      <div className="h-20 animate-pulse rounded-lg border border-slate-200 bg-white" />
      <div className="h-64 animate-pulse rounded-lg border border-slate-200 bg-slate-50" />
      <p className="text-sm text-slate-500">{t("energy.loadingText")}</p>
    </section>
  );
}
