import { dashboardI18n } from "@/lib/i18n/request";
import { sessionsTranslator } from "../i18n";
import { NotFoundPanel } from "../../_components/not-found-panel";

export default async function SessionNotFound() {
  const t = sessionsTranslator((await dashboardI18n()).locale);
  return <NotFoundPanel what={t("sessions.notFound")} backHref="/dashboard/sessions" backLabel={t("sessions.back")} />;
}
