import { dashboardI18n } from "@/lib/i18n/request";
import { NotFoundPanel } from "../../_components/not-found-panel";

export default async function SessionNotFound() {
  const { t } = await dashboardI18n();
  return <NotFoundPanel what={t("sessions.notFound")} backHref="/dashboard/sessions" backLabel={t("sessions.back")} />;
}
