// The install page's actions (issue 14): what a console operator may do to one install, each a
// server action (./actions.ts) that checks the caller, acts and writes the audit log. A viewer sees
// the panel without its buttons, and why. Each action's result is shown under its button.
import Link from "next/link";
import { actionsFor, fetchActionTarget } from "@/lib/admin/actions";
import { canAct, requireStaff } from "@/lib/auth/staff";
import { ActionButtons } from "./action-buttons";

export async function ActionsPanel({ installRowId }: { installRowId: string }) {
  const staff = await requireStaff();
  const install = await fetchActionTarget(installRowId);
  if (!install) return null;
  const available = actionsFor(install);

  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 sm:p-5" aria-labelledby="actions-heading" data-testid="actions-panel">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="actions-heading" className="text-lg font-semibold">
          Actions
        </h2>
        <Link href={`/admin/audit?install=${install.id}`} className="text-sm text-brand-700 hover:underline" data-testid="audit-link">
          Audit log for this install →
        </Link>
      </div>
      {!canAct(staff) ? (
        <p className="mt-2 text-sm text-slate-600" data-testid="actions-viewer">
          You are signed in as a <strong>viewer</strong>: you see everything in the console, and changing anything needs the
          console&apos;s operator role. Ask whoever manages the staff accounts (<code>STAFF_USERS</code>) if you need it.
        </p>
      ) : (
        <>
          {available.length === 0 ? (
            <p className="mt-2 text-sm text-slate-600" data-testid="actions-none">
              {install.status === "REVOKED"
                ? "The operator uninstalled the app: there is nothing to do for this install."
                : "The app makes no calls for this install. It comes back when the operator opens the app from their operator portal (a new consent)."}
            </p>
          ) : null}
          <ActionButtons installRowId={install.id} actions={available} />
        </>
      )}
    </section>
  );
}
