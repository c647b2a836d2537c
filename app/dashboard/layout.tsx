// Every dashboard page: the signed-in operator's install and its state. Pages below render only
// for an operator with a session; the install's status decides what they may show.
import Link from "next/link";
import { SignOutButton } from "@/app/components/sign-out-button";
import { currentOperator } from "@/lib/auth/operator-session";
import { env } from "@/lib/env";
import { loadDashboardInstall } from "@/lib/installs/dashboard";
import { InstallStatusPanel } from "./install-status";
import { DashboardNav } from "./nav";

export const dynamic = "force-dynamic";

export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const operator = await currentOperator();
  if (!operator) {
    const portalUrl = env().OPERATOR_PORTAL_URL;
    return (
      <div className="max-w-2xl rounded-lg border border-slate-200 bg-white p-6">
        <h1 className="text-xl font-semibold">Open this app from your operator portal</h1>
        <p className="mt-2 text-slate-600">
          You are not signed in. Operators reach this dashboard through the operator portal, where the app is installed.
        </p>
        {portalUrl ? (
          <a href={portalUrl} className="mt-4 inline-block text-brand-700 underline">
            Open the operator portal
          </a>
        ) : (
          <Link href="/" className="mt-4 inline-block text-brand-700 underline">
            How to install
          </Link>
        )}
      </div>
    );
  }
  const install = await loadDashboardInstall(operator.installRowId);
  // Signing out ends the session on the server too (lib/auth/sessions.ts): on a shared computer,
  // the next person cannot come back to this dashboard, even with a copy of the cookie.
  const signOut = (
    <div className="flex justify-end">
      <SignOutButton callbackUrl="/" />
    </div>
  );
  if (!install) {
    return (
      <div className="space-y-4">
        {signOut}
        <p className="text-slate-600">This install no longer exists. Install the app again from the operator portal.</p>
      </div>
    );
  }
  return (
    <div className="space-y-6">
      {signOut}
      <InstallStatusPanel install={install} />
      {install.status === "ACTIVE" ? (
        <>
          <DashboardNav />
          {children}
        </>
      ) : null}
    </div>
  );
}
