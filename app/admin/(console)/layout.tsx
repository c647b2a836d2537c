// The staff console's frame: a small nav and the signed-in staff member. `(console)` is a route
// group: it adds no URL segment, it only keeps /admin/sign-in outside this layout.
//
// This layout checks the session too, but only to render the frame: a layout does not re-run on
// every navigation, so each page (and each server action) calls requireStaff() itself.
import Link from "next/link";
import { requireStaff } from "@/lib/auth/staff";
import { SignOutButton } from "@/app/components/sign-out-button";
import { CodeRefusalBanner } from "../code-refusal-banner";

export const dynamic = "force-dynamic";

export default async function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const staff = await requireStaff();
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-center justify-between gap-3 border-b border-slate-200 pb-3">
        <nav aria-label="Staff console" className="flex items-center gap-4 text-sm">
          <span className="font-semibold text-slate-900">Staff console</span>
          <Link href="/admin" className="text-brand-700 hover:underline">
            Installs
          </Link>
          <Link href="/admin/webhooks" className="text-brand-700 hover:underline">
            Webhooks
          </Link>
          <Link href="/admin/audit" className="text-brand-700 hover:underline">
            Audit log
          </Link>
        </nav>
        <div className="flex items-center gap-3 text-sm text-slate-600">
          <span data-testid="staff-email">{staff.email}</span>
          <span className="rounded-full bg-slate-100 px-2 py-0.5 text-xs text-slate-700" data-testid="staff-role">
            {staff.role}
          </span>
          <SignOutButton callbackUrl="/admin/sign-in" />
        </div>
      </div>
      <CodeRefusalBanner />
      {children}
    </div>
  );
}
