// What the app is, and how an operator installs it: from the service's operator portal.
// There is deliberately no "Connect" button here (contract §1.3: the service starts the flow).
// A signed-in operator is offered their dashboard only while it exists: for an install that was
// uninstalled or lost its access, this page says what happened instead.
import Link from "next/link";
import { currentOperator } from "@/lib/auth/operator-session";
import { env } from "@/lib/env";
import { fetchInstallSummary } from "@/lib/installs/dashboard";
import { formatterFor } from "@/lib/i18n/format";
import { translator } from "@/lib/i18n/messages";
import { dashboardI18n } from "@/lib/i18n/request";
import { PortalLink, describeLostInstall, operatorDisplayName } from "./dashboard/install-status";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const operator = await currentOperator();
  // No reconcile here (that is the dashboard's): the home page never calls the service.
  const install = operator ? await fetchInstallSummary(operator.installRowId) : null;
  const portalUrl = env().OPERATOR_PORTAL_URL;
  // This page is in English (its own text is not in the catalogue), with times in the operator's zone.
  const words = { t: translator("en"), f: formatterFor("en", (await dashboardI18n()).timeZone) };
  const lost = install ? describeLostInstall(install, words) : null;
  return (
    <div className="space-y-6">
      <h1 className="text-2xl font-semibold tracking-tight sm:text-3xl">Charge data for your network</h1>
      <p className="max-w-2xl text-slate-600">
        This app reads your charge points and charging sessions through the partner integration service, with your consent,
        and shows them in one dashboard.
      </p>
      {install && !lost ? (
        // ACTIVE, or NEEDS_REAUTH: the dashboard is there, and explains the approval it waits for.
        <div className="space-y-2">
          <p className="text-sm text-slate-600">Signed in as {operatorDisplayName(install, words)}.</p>
          <Link
            href="/dashboard"
            className="inline-block rounded-md bg-brand-700 px-4 py-2 font-medium text-white hover:bg-brand-800"
            data-testid="open-dashboard"
          >
            Open your dashboard
          </Link>
        </div>
      ) : install && lost ? (
        <section className="max-w-2xl rounded-lg border border-slate-300 bg-white p-4 sm:p-5" data-testid="install-lost">
          <h2 className="font-semibold">{lost.title}</h2>
          <p className="mt-1 text-sm text-slate-700">{lost.text}</p>
          <div className="mt-3">
            <PortalLink portalUrl={portalUrl}>Go to the operator portal</PortalLink>
          </div>
        </section>
      ) : (
        <HowToInstall portalUrl={portalUrl} />
      )}
    </div>
  );
}

function HowToInstall({ portalUrl }: { portalUrl: string | undefined }) {
  return (
    <section className="max-w-2xl rounded-lg border border-slate-200 bg-white p-4 sm:p-5" data-testid="how-to-install">
      <h2 className="font-medium">How to install</h2>
      <ol className="mt-2 list-decimal space-y-1 pl-5 text-slate-600">
        <li>Sign in to your operator portal.</li>
        <li>Find this app in the app catalogue and select Connect.</li>
        <li>Review the access it asks for and approve. You will land on your dashboard here.</li>
      </ol>
      <p className="mt-3 text-sm text-slate-600">Already installed? Select Open next to the app in your portal to come back to your dashboard.</p>
      <div className="mt-4">
        <PortalLink portalUrl={portalUrl}>Go to the operator portal</PortalLink>
      </div>
    </section>
  );
}
