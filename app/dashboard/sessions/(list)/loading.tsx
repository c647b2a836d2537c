import { dashboardI18n } from "@/lib/i18n/request";
import { sessionsTranslator } from "../i18n";
import { TableSkeleton } from "../../_components/skeleton";

export default async function Loading() {
  const t = sessionsTranslator((await dashboardI18n()).locale);
  return <TableSkeleton label={t("sessions.loading")} />;
}
