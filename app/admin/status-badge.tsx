// An install's status as staff see it: the same four labels the operator's dashboard uses.
import type { InstallStatus } from "@/lib/db/generated/enums";

export const STATUS_LABEL: Record<InstallStatus, { label: string; tone: string }> = {
  ACTIVE: { label: "Connected", tone: "bg-emerald-100 text-emerald-800" },
  NEEDS_REAUTH: { label: "Re-authorization needed", tone: "bg-amber-100 text-amber-900" },
  REINSTALL_NEEDED: { label: "Re-install needed", tone: "bg-red-100 text-red-800" },
  REVOKED: { label: "Uninstalled", tone: "bg-slate-200 text-slate-700" },
};

export function StatusBadge({ status }: { status: InstallStatus }) {
  const { label, tone } = STATUS_LABEL[status];
  return (
    <span className={`inline-block whitespace-nowrap rounded-full px-2.5 py-0.5 text-xs font-medium ${tone}`} data-status={status}>
      {label}
    </span>
  );
}
