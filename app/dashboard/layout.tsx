// Every dashboard page: the signed-in operator's install and its state. Pages below render only for
// an operator with a session and an install whose local copy is shown (showsLocalCopy: ACTIVE, or
// read-only while re-authorization is pending); in any other state the panel alone says what
// happened and where to go, and no section (nor its nav) is offered, since none could show anything.
//
// The header is one line (the operator's name, the install's state, Sign out) so that every page's
// own figures start high on a phone's first screen; the install's details (its id, what the app may
// read, the operator's settings) have their own section, "Settings and access" (./settings). Only
// what the operator must act on is added above the nav: the approval the app waits for (contract §7),
// on every page.
//
// A revoked install's local copy is NOT shown here, although it is kept for SYNC_RETENTION_DAYS
// (docs/data-retention.md): the operator withdrew their consent, and the copy is kept for the
// partner's business (a mistaken uninstall, a dispute, an export on request), not as a product.
import Link from "next/link";
import { SignOutButton } from "@/app/components/sign-out-button";
import { currentOperator } from "@/lib/auth/operator-session";
import { currentStaff } from "@/lib/auth/staff";
import { env } from "@/lib/env";
import { loadDashboardInstall, showsLocalCopy } from "@/lib/installs/dashboard";
import { dashboardI18n } from "@/lib/i18n/request";
import { LOCALES } from "@/lib/i18n/locales";
import { DisplayProvider } from "./_components/i18n";
import { ReadOnlyNotice } from "./_components/read-only-notice";
import { InstallStatusPanel, PortalLink } from "./install-status";
import { DashboardNav } from "./nav";

export const dynamic = "force-dynamic";

export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const operator = await currentOperator();
  const portalUrl = env().OPERATOR_PORTAL_URL;
  if (!operator) {
    // A staff member's session is not an operator's (lib/auth/staff.ts: one browser is one or the
    // other): tell them where they are rather than that they are not signed in.
    if (await currentStaff()) return <StaffHere />;
    return <SignedOut portalUrl={portalUrl} />;
  }

  const install = await loadDashboardInstall(operator.installRowId);
  // The operator's language and zone (docs/spec-gaps.md A151), for this layout and, through
  // DisplayProvider, for the client components below it.
  const { t, locale, timeZone, zoneFrom } = await dashboardI18n();
  if (!install) {
    return (
      <div className="space-y-4">
        <div className="flex justify-end">
          <SignOutButton callbackUrl="/" label={t("chrome.signOut")} pendingLabel={t("chrome.signingOut")} />
        </div>
        <section className="rounded-lg border border-slate-200 bg-white p-4 sm:p-6" data-testid="install-lost">
          <h1 className="text-xl font-semibold">{t("chrome.installGoneTitle")}</h1>
          <p className="mt-2 text-slate-600">{t("chrome.installGoneText")}</p>
          <div className="mt-4">
            <PortalLink portalUrl={portalUrl} />
          </div>
        </section>
      </div>
    );
  }
  return (
    <DisplayProvider locale={locale} timeZone={timeZone} zoneFrom={zoneFrom}>
    <div className="space-y-4 sm:space-y-6" lang={LOCALES[locale].tag}>
      <div className="space-y-3">
        <InstallStatusPanel install={install} portalUrl={portalUrl} />
        {showsLocalCopy(install.status) ? <DashboardNav /> : null}
      </div>
      {showsLocalCopy(install.status) ? (
        <>
          <ReadOnlyNotice install={install} />
          {children}
        </>
      ) : null}
    </div>
    </DisplayProvider>
  );
}

/**
 * The way back in (contract §1.2-§1.3): the app never starts an authorization itself, so a person
 * whose session ended (signed out, expired, another browser) goes back through the operator portal,
 * whose "Open" signs them in again on the same install.
 */
function SignedOut({ portalUrl }: { portalUrl: string | undefined }) {
  return (
    <section className="max-w-2xl rounded-lg border border-slate-200 bg-white p-4 sm:p-6" data-testid="signed-out">
      <h1 className="text-xl font-semibold">Open this app from your operator portal</h1>
      <p className="mt-2 text-slate-600">
        You are not signed in here. For your security, this app has no password of its own: you reach your dashboard through your operator
        portal, where the app is installed.
      </p>
      <ol className="mt-3 list-decimal space-y-1 pl-5 text-sm text-slate-600">
        <li>Sign in to your operator portal.</li>
        <li>Find this app among your installed apps and select Open.</li>
        <li>You come back here, signed in to your dashboard.</li>
      </ol>
      <p className="mt-3 text-sm text-slate-600">Not installed yet? Select Connect there instead, and approve the access it asks for.</p>
      <div className="mt-4">
        <PortalLink portalUrl={portalUrl}>Go to the operator portal</PortalLink>
      </div>
    </section>
  );
}

/** A staff member who opened an operator's address: the console is theirs; the dashboard is the operator's. */
function StaffHere() {
  return (
    <section className="max-w-2xl rounded-lg border border-slate-200 bg-white p-4 sm:p-6" data-testid="staff-on-dashboard">
      <h1 className="text-xl font-semibold">You are signed in to the staff console</h1>
      <p className="mt-2 text-slate-600">
        This dashboard belongs to each operator, who reaches it from their operator portal. Staff see every install, its history and its
        data from the console.
      </p>
      <Link href="/admin" className="mt-4 inline-block rounded-md bg-brand-700 px-4 py-2 text-sm font-medium text-white hover:bg-brand-800">
        Go to the staff console
      </Link>
    </section>
  );
}
