// "As of" line: how fresh the local copy a page shows is (lib/dashboard/freshness.ts).
import { dashboardI18n } from "@/lib/i18n/request";

export async function AsOf({ asOf, testId = "as-of" }: { asOf: Date; testId?: string }) {
  const { t, f } = await dashboardI18n();
  return (
    <p className="text-xs text-slate-500" data-testid={testId}>
      {t("asOf.text")} <time dateTime={asOf.toISOString()}>{f.dateTime(asOf)}</time>
    </p>
  );
}
