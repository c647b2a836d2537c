// GET /dashboard/settings: "Settings and access". The install's details, off the header of every
// page so that a phone's first screen shows the page's own figures: the service's install id (what
// the operator quotes to support), when it was made, what the operator allowed the app to read
// (contract §2, in words), and the settings they chose for it in the operator portal
// (install.config.updated, contract §6). Everything about the install is changed in the portal,
// never in the app (contract §1.2), so the page says where.
//
// One thing is chosen here instead: how this browser shows the dashboard (its language and time
// zone). The contract gives no operator language or zone (docs/spec-gaps.md A151), so the operator
// may override what the app guessed; the choice is theirs and this browser's (A152).
import type { Metadata } from "next";
import { currentOperator } from "@/lib/auth/operator-session";
import { env } from "@/lib/env";
import { loadDashboardInstall } from "@/lib/installs/dashboard";
import { LOCALES, type Display, type DisplaySource } from "@/lib/i18n/locales";
import type { MessageKey, Translator } from "@/lib/i18n/messages";
import { dashboardI18n } from "@/lib/i18n/request";
import { acceptedTimeZones } from "@/lib/i18n/database-zones";
import { AUTOMATIC, LOCALE_COOKIE, ZONE_COOKIE, selectableTimeZones } from "@/lib/i18n/settings";
import { cookies } from "next/headers";
import { saveDisplaySettingsAction } from "../actions";
import { GrantedAccess, InstallConfiguration, InstallIdentity, PortalLink } from "../install-status";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await dashboardI18n()).t("settings.title") };
}

export default async function SettingsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  // A page must not rely on its layout for authorization: re-read the operator and the install.
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install) return null;
  const i18n = await dashboardI18n();
  const { t } = i18n;
  const display = (await searchParams).display;

  return (
    <div className="space-y-4" data-testid="settings">
      <h2 className="text-lg font-semibold">{t("settings.title")}</h2>
      <Panel title={t("settings.installPanel")}>
        <InstallIdentity install={install} />
      </Panel>
      <Panel title={t("settings.accessPanel")}>
        <GrantedAccess scopes={install.grantedScopes} />
      </Panel>
      <Panel title={t("settings.configPanel")}>
        <InstallConfiguration config={install.config} receivedAt={install.configUpdatedAt} grantedScopes={install.grantedScopes} />
      </Panel>
      <Panel title={t("settings.changePanel")}>
        <p className="mb-3 text-sm text-slate-600">{t("settings.changeText")}</p>
        <PortalLink portalUrl={env().OPERATOR_PORTAL_URL} />
      </Panel>
      <Panel title={t("display.panel")} id="display">
        <DisplayForm i18n={i18n} outcome={typeof display === "string" ? display : undefined} />
      </Panel>
    </div>
  );
}

const SOURCE_WORDS: Record<DisplaySource, MessageKey> = {
  choice: "display.source.choice",
  country: "display.source.country",
  browser: "display.source.browser",
  default: "display.source.default",
};

/**
 * The language and zone form: a plain POST to a server action, so it works without JavaScript. Each
 * list starts with "Automatic", which follows the install's country, then the browser (A151).
 */
async function DisplayForm({ i18n, outcome }: { i18n: Display & { t: Translator; zoneLabel: string }; outcome: string | undefined }) {
  const { t } = i18n;
  const jar = await cookies();
  const chosenLocale = jar.get(LOCALE_COOKIE)?.value;
  const chosenZone = jar.get(ZONE_COOKIE)?.value;
  const message =
    outcome === "saved"
      ? { text: t("display.saved", { zone: i18n.zoneLabel }), tone: "text-emerald-800" }
      : outcome === "bad-locale"
        ? { text: t("display.badLocale"), tone: "text-red-800" }
        : outcome === "bad-zone"
          ? { text: t("display.badTimeZone"), tone: "text-red-800" }
          : outcome === "unsupported-zone"
            ? { text: t("display.unsupportedTimeZone"), tone: "text-red-800" }
            : null;
  // Only zones the database reads as Intl does (lib/i18n/database-zones.ts): one statement per process.
  const zones = await acceptedTimeZones(selectableTimeZones());
  return (
    <div className="space-y-3 text-sm">
      <p className="text-slate-600">{t("display.text")}</p>
      <p className="text-slate-700" data-testid="display-current" data-locale={i18n.locale} data-time-zone={i18n.timeZone}>
        {t("display.current", {
          language: LOCALES[i18n.locale].name,
          localeSource: t(SOURCE_WORDS[i18n.localeFrom]),
          zone: i18n.timeZone,
          zoneSource: t(SOURCE_WORDS[i18n.zoneFrom]),
        })}
      </p>
      {message ? (
        <p className={message.tone} role="status" data-testid="display-outcome" data-outcome={outcome}>
          {message.text}
        </p>
      ) : null}
      <form action={saveDisplaySettingsAction} className="flex flex-wrap items-end gap-3" data-testid="display-form">
        <label className="flex flex-col gap-1 text-xs text-slate-600">
          {t("display.language")}
          <select name="locale" defaultValue={chosenLocale && chosenLocale in LOCALES ? chosenLocale : AUTOMATIC} className="rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900">
            <option value={AUTOMATIC}>{t("display.automatic")}</option>
            {Object.entries(LOCALES).map(([code, { name, tag }]) => (
              <option key={code} value={code} lang={tag}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs text-slate-600">
          {t("display.timeZone")}
          <select name="timeZone" defaultValue={chosenZone ?? AUTOMATIC} className="max-w-64 rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900">
            <option value={AUTOMATIC}>{t("display.automatic")}</option>
            {[...zones].map((zone) => (
              <option key={zone} value={zone}>
                {zone}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="rounded-md bg-brand-700 px-4 py-1.5 font-medium text-white hover:bg-brand-800">
          {t("display.save")}
        </button>
      </form>
    </div>
  );
}

function Panel({ title, id, children }: { title: string; id?: string; children: React.ReactNode }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4 sm:p-5" id={id}>
      <h3 className="mb-2 text-sm font-medium text-slate-700">{title}</h3>
      {children}
    </section>
  );
}
