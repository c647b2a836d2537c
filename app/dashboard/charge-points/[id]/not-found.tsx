import { dashboardI18n } from "@/lib/i18n/request";
import { NotFoundPanel } from "../../_components/not-found-panel";

export default async function ChargePointNotFound() {
  const { t } = await dashboardI18n();
  return <NotFoundPanel what={t("chargePoints.notFound")} backHref="/dashboard/charge-points" backLabel={t("chargePoints.back")} />;
}
