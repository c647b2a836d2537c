// While re-authorization is pending (NEEDS_REAUTH), the sections show the app's copy of the data as it
// was when the app stopped reading (contract §7: no API call for the install until the operator
// re-consents). This line, above every section, says so: what is shown is not updated, and since when.
import type { InstallSummary } from "@/lib/installs/dashboard";
import { formatDateTime } from "../format";

export function ReadOnlyNotice({ install }: { install: Pick<InstallSummary, "status" | "statusChangedAt"> }) {
  if (install.status !== "NEEDS_REAUTH") return null;
  return (
    <p className="rounded-md border border-slate-300 bg-slate-50 p-3 text-sm text-slate-700" role="note" data-testid="read-only-notice">
      Showing the app&rsquo;s copy of your data, read-only: not updated since{" "}
      <time dateTime={install.statusChangedAt.toISOString()}>{formatDateTime(install.statusChangedAt)}</time>. It updates again once you
      approve the app&rsquo;s new access.
    </p>
  );
}
