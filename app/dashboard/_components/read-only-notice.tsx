// While re-authorization is pending (NEEDS_REAUTH), the sections show the app's copy of the data as it
// was when the app stopped reading (contract §7: no API call for the install until the operator
// re-consents). This line, above every section, says so: what is shown is not updated, and since when.
import type { InstallSummary } from "@/lib/installs/dashboard";
import { dashboardI18n } from "@/lib/i18n/request";

export async function ReadOnlyNotice({ install }: { install: Pick<InstallSummary, "status" | "statusChangedAt"> }) {
  if (install.status !== "NEEDS_REAUTH") return null;
  const { t, f } = await dashboardI18n();
  return (
    <p className="rounded-md border border-slate-300 bg-slate-50 p-3 text-sm text-slate-700" role="note" data-testid="read-only-notice">
      {t("readOnly.before")} <time dateTime={install.statusChangedAt.toISOString()}>{f.dateTime(install.statusChangedAt)}</time>
      {t("readOnly.after")}
    </p>
  );
}
