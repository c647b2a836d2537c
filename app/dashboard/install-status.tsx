// The install's identity and state, shown above every dashboard page: who the operator is and whether
// the app is connected. When the install is not usable, it says what happened, when, and where to
// go: the operator portal (contract §1.2: the only place an operator connects, re-connects or opens
// the app). What the app may read (in words) and the configuration the operator chose are shown on
// the "Settings and access" page, from the components at the end of this file.
import { SignOutButton } from "@/app/components/sign-out-button";
import type { InstallSummary } from "@/lib/installs/dashboard";
import { isSafeRedirect } from "@/lib/installs/reauth";
import { describeScopes } from "@/lib/installs/scope-words";
import { resourceShared } from "@/lib/sync/resources";
import { readDashboardConfig } from "@/lib/dashboard/config";
import { dashboardI18n } from "@/lib/i18n/request";
import type { MessageKey, Words } from "@/lib/i18n/messages";
import { checkReauthorizationAction, startReauthorizationAction } from "./actions";

type Status = InstallSummary["status"];

const STATUS_BADGE: Record<Status, { label: MessageKey; tone: string }> = {
  ACTIVE: { label: "status.ACTIVE", tone: "bg-emerald-100 text-emerald-800" },
  NEEDS_REAUTH: { label: "status.NEEDS_REAUTH", tone: "bg-amber-100 text-amber-900" },
  REINSTALL_NEEDED: { label: "status.REINSTALL_NEEDED", tone: "bg-red-100 text-red-800" },
  REVOKED: { label: "status.REVOKED", tone: "bg-slate-200 text-slate-700" },
};

/** "Operator 1001" until the service states the operator's name (lib/installs/identity.ts). */
export function operatorDisplayName(install: Pick<InstallSummary, "operatorName" | "operatorId">, { t }: Pick<Words, "t">): string {
  return install.operatorName ?? t("chrome.operatorFallback", { id: install.operatorId });
}

/**
 * What happened to an install the app can no longer use, and when (the status change is recorded
 * with the install: `statusChangedAt`). Null for an install that works or only awaits approval.
 */
export function describeLostInstall(
  install: Pick<InstallSummary, "status" | "statusChangedAt" | "statusCause" | "refreshAnswerLost">,
  { t, f }: Words,
): { title: string; text: string } | null {
  const when = f.dateTime(install.statusChangedAt);
  switch (install.status) {
    case "REVOKED":
      return {
        title: t("lost.revokedTitle", { when }),
        text: t("lost.revokedText"),
      };
    case "REINSTALL_NEEDED":
      // The partner's own staff stopped it (the console's "mark for re-install"): say so, not that the
      // service refused the app.
      if (install.statusCause === "staff") {
        return {
          title: t("lost.staffTitle", { when }),
          text: t("lost.staffText"),
        };
      }
      // A renewal whose answer was lost (lib/oauth/refresh.ts): say what is known, in plain words. At
      // some services the app cannot tell whether the renewal happened, so this names both ways it
      // can have gone (the renewal went through and its answer was lost, or the app was removed).
      if (install.refreshAnswerLost) {
        return {
          title: t("lost.title", { when }),
          text: t("lost.answerLostText"),
        };
      }
      return {
        title: t("lost.title", { when }),
        text: t("lost.text"),
      };
    default:
      return null;
  }
}

/** The way to the operator portal, or how to find it when the app was not told its address. */
export async function PortalLink({ portalUrl, children }: { portalUrl: string | undefined; children?: React.ReactNode }) {
  const { t } = await dashboardI18n();
  if (!portalUrl) return <p className="text-sm text-slate-700">{t("chrome.portalHint")}</p>;
  return (
    <a
      href={portalUrl}
      className="inline-block rounded-md bg-brand-700 px-4 py-2 text-sm font-medium text-white hover:bg-brand-800"
      data-testid="portal-link"
    >
      {children ?? t("chrome.portalButton")}
    </a>
  );
}

/**
 * The header of every dashboard page: who the operator is and the install's state, in one line, and
 * Sign out. Below it, only what the operator must act on: what happened to an install the app lost,
 * or the approval the app waits for (contract §7). The install's details are on the "Settings and
 * access" page (./settings), so they do not push every page's figures below a phone's first screen.
 */
export async function InstallStatusPanel({ install, portalUrl }: { install: InstallSummary; portalUrl: string | undefined }) {
  const words = await dashboardI18n();
  const { t } = words;
  const badge = STATUS_BADGE[install.status];
  const lost = describeLostInstall(install, words);
  return (
    <section className="space-y-3" aria-label={t("chrome.installRegion")}>
      <div className="flex items-start justify-between gap-3">
        <div className="flex min-w-0 flex-wrap items-center gap-x-3 gap-y-1">
          <h1 className="min-w-0 break-words text-xl font-semibold" data-testid="operator-name">
            {operatorDisplayName(install, words)}
          </h1>
          <span className={`rounded-full px-2.5 py-0.5 text-xs font-medium ${badge.tone}`} data-testid="install-status" data-status={install.status}>
            {t(badge.label)}
          </span>
        </div>
        {/* Signing out ends the session on the server too (lib/auth/sessions.ts): on a shared computer,
            the next person cannot come back to this dashboard, even with a copy of the cookie. */}
        <div className="shrink-0">
          <SignOutButton callbackUrl="/" label={t("chrome.signOut")} pendingLabel={t("chrome.signingOut")} />
        </div>
      </div>

      {lost ? (
        <div className="rounded-md border border-slate-300 bg-white p-4" role="status" data-testid="install-lost">
          <h2 className="font-semibold text-slate-900">{lost.title}</h2>
          <p className="mt-1 text-sm text-slate-700">{lost.text}</p>
          {install.dataDeletedOn ? (
            // A209: a lost install's copy goes after the retention period, as an uninstalled one's does.
            <p className="mt-1 text-sm text-slate-700" data-testid="data-deleted-on" data-deleted-on={install.dataDeletedOn.toISOString().slice(0, 10)}>
              {t("lost.dataDeletedOn", { when: words.f.date(install.dataDeletedOn) })}
            </p>
          ) : null}
          <div className="mt-3">
            <PortalLink portalUrl={portalUrl} />
          </div>
        </div>
      ) : null}
      {install.status === "NEEDS_REAUTH" ? <ReauthorizeBanner reauthUrl={install.reauthUrl} /> : null}
      {install.reconnectBy ? (
        // A renewal's answer was lost where the app cannot prove it never happened (lib/oauth/refresh.ts,
        // rule 3): the app still works until its last access expires; a reconnect from the portal keeps the install.
        <div className="rounded-md border border-amber-300 bg-amber-50 p-4" role="status" data-testid="reconnect-needed">
          <h2 className="font-semibold text-amber-900">{t("reconnect.title")}</h2>
          <p className="mt-1 text-sm text-amber-900">{t("reconnect.text", { when: words.f.dateTime(install.reconnectBy) })}</p>
          <div className="mt-3">
            <PortalLink portalUrl={portalUrl} />
          </div>
        </div>
      ) : null}
    </section>
  );
}

/** The install's identity, for the "Settings and access" page: the service's install id and when it was made. */
export async function InstallIdentity({ install }: { install: Pick<InstallSummary, "installId" | "createdAt"> }) {
  const { t, f } = await dashboardI18n();
  return (
    <dl className="grid grid-cols-1 gap-x-6 gap-y-1 text-sm text-slate-600 sm:grid-cols-2">
      <div>
        <dt className="inline">{t("settings.installId")}</dt>
        <dd className="inline font-mono" data-testid="install-id">
          {install.installId ?? t("settings.installIdPending")}
        </dd>
      </div>
      <div>
        <dt className="inline">{t("settings.installed")}</dt>
        <dd className="inline">{f.date(install.createdAt)}</dd>
      </div>
    </dl>
  );
}

/** contract §2: the operator saw the exact scope list at consent; here it is again, in words. */
export async function GrantedAccess({ scopes }: { scopes: string[] }) {
  const { t } = await dashboardI18n();
  const words = describeScopes(scopes, t);
  return words.length === 0 ? (
    <p className="text-sm text-slate-600">{t("settings.nothingYet")}</p>
  ) : (
    <ul className="flex flex-wrap gap-1.5 text-sm" data-testid="granted-scopes">
      {words.map((text) => (
        <li key={text} className="rounded-md bg-slate-100 px-2 py-0.5 text-slate-700">
          {text}
        </li>
      ))}
    </ul>
  );
}

/**
 * The per-install configuration the operator set in the portal (install.config.updated), in words,
 * as the app applies it (lib/dashboard/config.ts): nothing chosen means the defaults, said as such.
 * `receivedAt`: when it was sent. A lost delivery cannot be read back from the API (A210), so the
 * operator is told what the app has and how to send it again.
 */
export async function InstallConfiguration({ config, receivedAt, grantedScopes }: { config: unknown; receivedAt: Date | null; grantedScopes: readonly string[] }) {
  const { t, f } = await dashboardI18n();
  const { currency, siteIds, syncCharges } = readDashboardConfig(config);
  const rows = [
    { label: t("settings.sites"), value: siteIds.length === 0 ? t("settings.sitesAll") : t("settings.sitesChosen", { count: siteIds.length, list: siteIds.join(", ") }) },
    // "yes" is what the operator chose; without the scope there is nothing to import (contract §2).
    { label: t("settings.importSessions"), value: !syncCharges ? t("settings.no") : resourceShared("charges", grantedScopes) ? t("settings.yes") : t("settings.yesNotShared") },
    { label: t("settings.currency"), value: currency ?? t("settings.currencyAsRecorded") },
  ];
  return (
    <div className="text-sm" data-testid="install-config">
      <dl className="grid grid-cols-1 gap-x-6 gap-y-1 text-slate-600 sm:grid-cols-3">
        {rows.map(({ label, value }) => (
          <div key={label} className="min-w-0 break-words">
            <dt className="inline">{label}: </dt>
            <dd className="inline font-medium text-slate-800">{value}</dd>
          </div>
        ))}
      </dl>
      {receivedAt ? (
        <p className="mt-2 text-slate-600" data-testid="config-received">
          {t("settings.configReceived", { when: f.dateTime(receivedAt) })}
        </p>
      ) : (
        <p className="mt-2 text-slate-600" data-testid="config-not-received">
          {t("settings.configNotReceived")}
        </p>
      )}
    </div>
  );
}

/**
 * contract §7: show the state in the product and send the operator to reauth_url. The link is the
 * service's own page (never an authorization URL built by the app), and only ever the service's: a
 * reauth_url at any other origin gets no button, only the way through the portal.
 */
export async function ReauthorizeBanner({ reauthUrl }: { reauthUrl: string | null }) {
  const { t } = await dashboardI18n();
  const followable = reauthUrl !== null && isSafeRedirect(reauthUrl);
  return (
    <div className="rounded-md border border-amber-300 bg-amber-50 p-4" role="status" data-testid="reauth-banner">
      <h2 className="font-semibold text-amber-900">{t("reauth.title")}</h2>
      <p className="mt-1 text-sm text-amber-900">{t("reauth.text")}</p>
      <div className="mt-3 flex flex-wrap items-center gap-3">
        {followable ? (
          <form action={startReauthorizationAction}>
            <button type="submit" className="rounded-md bg-amber-700 px-4 py-2 text-sm font-medium text-white hover:bg-amber-800">
              {t("reauth.approve")}
            </button>
          </form>
        ) : (
          <p className="text-sm text-amber-900">{t("reauth.viaPortal")}</p>
        )}
        {/* Approved from the portal or a support link instead: let the operator ask the app to look. */}
        <form action={checkReauthorizationAction}>
          <button
            type="submit"
            className="rounded-md border border-amber-400 bg-white px-4 py-2 text-sm font-medium text-amber-900 hover:bg-amber-100"
            data-testid="reauth-check"
          >
            {t("reauth.alreadyApproved")}
          </button>
        </form>
      </div>
    </div>
  );
}
