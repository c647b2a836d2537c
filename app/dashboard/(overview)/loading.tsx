// The Overview's skeleton, streamed at once while the figures are read: the shape of the page
// (headline figures, then the chart tiles), so nothing jumps when they arrive.
import { dashboardI18n } from "@/lib/i18n/request";

export default async function OverviewLoading() {
  const { t } = await dashboardI18n();
  return (
    <div className="space-y-6" aria-busy="true" aria-live="polite" data-testid="overview-loading">
      <p className="sr-only">{t("overview.loading")}</p>
      <div className="h-8 w-64 max-w-full animate-pulse rounded-md bg-slate-200" />
      <div className="grid grid-cols-2 gap-3 lg:grid-cols-4">
        {Array.from({ length: 4 }, (_, i) => (
          <div key={i} className="h-24 animate-pulse rounded-lg border border-slate-200 bg-white p-4">
            <div className="h-3 w-20 rounded bg-slate-200" />
            <div className="mt-3 h-6 w-24 rounded bg-slate-200" />
          </div>
        ))}
      </div>
      <div className="grid gap-4 lg:grid-cols-2">
        {Array.from({ length: 4 }, (_, i) => (
          <div key={i} className="h-72 animate-pulse rounded-lg border border-slate-200 bg-white p-4">
            <div className="h-4 w-40 rounded bg-slate-200" />
            <div className="mt-4 h-52 rounded bg-slate-100" />
          </div>
        ))}
      </div>
    </div>
  );
}
