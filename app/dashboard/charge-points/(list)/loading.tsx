import { dashboardI18n } from "@/lib/i18n/request";
import { TableSkeleton } from "../../_components/skeleton";

export default async function Loading() {
  const { t } = await dashboardI18n();
  return <TableSkeleton label={t("chargePoints.loading")} />;
}
