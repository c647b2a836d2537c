// The 404 of a detail page: an id the install does not have (unknown, removed, or another install's;
// the page never says which).
import Link from "next/link";
import { dashboardI18n } from "@/lib/i18n/request";

export async function NotFoundPanel({ what, backHref, backLabel }: { what: string; backHref: string; backLabel: string }) {
  const { t } = await dashboardI18n();
  return (
    <div className="space-y-2 rounded-lg border border-slate-200 bg-white p-6" data-testid="not-found">
      <h2 className="text-lg font-semibold">{t("common.notFoundTitle", { what })}</h2>
      <p className="text-sm text-slate-600">{t("common.notFoundText")}</p>
      <Link href={backHref} className="text-sm text-brand-700 hover:underline">
        {backLabel}
      </Link>
    </div>
  );
}
