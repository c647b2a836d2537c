// GET /dashboard/settings: "Settings and access". The install's details, off the header of every
// page so that a phone's first screen shows the page's own figures: the service's install id (what
// the operator quotes to support), when it was made, what the operator allowed the app to read
// (contract §2, in words), and the settings they chose for it in the operator portal
// (install.config.updated, contract §6). Everything here is changed in the portal, never in the app
// (contract §1.2), so the page says where.
import type { Metadata } from "next";
import { currentOperator } from "@/lib/auth/operator-session";
import { env } from "@/lib/env";
import { loadDashboardInstall } from "@/lib/installs/dashboard";
import { GrantedAccess, InstallConfiguration, InstallIdentity, PortalLink } from "../install-status";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Settings and access" };

export default async function SettingsPage() {
  // A page must not rely on its layout for authorization: re-read the operator and the install.
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install) return null;

  return (
    <div className="space-y-4" data-testid="settings">
      <h2 className="text-lg font-semibold">Settings and access</h2>
      <Panel title="This install">
        <InstallIdentity install={install} />
      </Panel>
      <Panel title="What the app may do">
        <GrantedAccess scopes={install.grantedScopes} />
      </Panel>
      <Panel title="Your settings for this app">
        <InstallConfiguration config={install.config} />
      </Panel>
      <Panel title="Change them">
        <p className="mb-3 text-sm text-slate-600">
          You choose these in your operator portal, where the app is installed: there you can change the settings, approve or withdraw access,
          or uninstall the app.
        </p>
        <PortalLink portalUrl={env().OPERATOR_PORTAL_URL}>Go to the operator portal</PortalLink>
      </Panel>
    </div>
  );
}

function Panel({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 sm:p-5">
      <h3 className="mb-2 text-sm font-medium text-slate-700">{title}</h3>
      {children}
    </section>
  );
}
