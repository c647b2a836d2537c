// GET /dashboard/charge-points/[id]: one charge point of the install, from the local copy: what it
// is, where it is, its connectors, and its recent sessions. An id the install does not have
// (unknown, removed, or another install's) is a 404 that says nothing about whose it is.
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Suspense } from "react";
import { currentOperator } from "@/lib/auth/operator-session";
import { SHOWS_TEAMS, loadChargePoint } from "@/lib/dashboard/charge-points";
import { readDashboardConfig } from "@/lib/dashboard/config";
import { loadFreshness } from "@/lib/dashboard/freshness";
import { recentSessionsOf } from "@/lib/dashboard/sessions";
import { loadDashboardInstall } from "@/lib/installs/dashboard";
import { resourceShared } from "@/lib/sync/resources";
import { dashboardI18n } from "@/lib/i18n/request";
import { AsOf } from "../../_components/as-of";
import { ChargePointStateBadge, powerLabel } from "../../_components/charge-point-state";
import { SessionStateBadge } from "../../_components/session-state";
import { SkeletonLine } from "../../_components/skeleton";
import { sectionListing } from "../../sections";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await dashboardI18n()).t("title.chargePoint") };
}

export const dynamic = "force-dynamic";

export default async function ChargePointPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install) return null;
  // Dates, amounts, power and states in the operator's language and zone (lib/i18n/request.ts).
  const { t, f } = await dashboardI18n();
  // Everything before the first byte is sent decides the status: this page has no loading boundary
  // above it (see ../(list)/page.tsx), so notFound() here is a real 404.
  const [chargePoint, freshness] = await Promise.all([loadChargePoint(install.id, id, t), loadFreshness(install.id)]);
  if (!chargePoint) notFound();
  const config = readDashboardConfig(install.config);
  // The sessions' own section, if the dashboard has one, for the links below (a fork may remove it).
  const sessionsHref = sectionListing("charges")?.href;
  const shared = resourceShared("charges", install.grantedScopes);

  const address = [chargePoint.address1, [chargePoint.zip, chargePoint.city].filter(Boolean).join(" "), chargePoint.country].filter(Boolean).join(", ");
  const mapHref =
    chargePoint.latitude !== null && chargePoint.longitude !== null
      ? `https://www.openstreetmap.org/?mlat=${chargePoint.latitude}&mlon=${chargePoint.longitude}#map=17/${chargePoint.latitude}/${chargePoint.longitude}`
      : null;

  return (
    <div className="space-y-6" data-testid="charge-point-detail" data-charge-point-id={chargePoint.id}>
      <div className="space-y-1">
        <Link href="/dashboard/charge-points" className="text-sm text-brand-700 hover:underline">
          {t("chargePoint.back")}
        </Link>
        <div className="flex flex-wrap items-center gap-3">
          <h2 className="break-words text-xl font-semibold">{chargePoint.name ?? t("chargePoints.fallback", { id: chargePoint.id })}</h2>
          <ChargePointStateBadge state={chargePoint.state} t={t} />
        </div>
        {freshness.charge_points.asOf ? <AsOf asOf={freshness.charge_points.asOf} /> : null}
      </div>

      <div className="grid gap-4 md:grid-cols-2">
        <section className="rounded-lg border border-slate-200 bg-white p-4" aria-labelledby="cp-details">
          <h3 id="cp-details" className="mb-3 font-medium">
            {t("chargePoint.details")}
          </h3>
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
            <Field label={t("chargePoint.typePower")}>{powerLabel(chargePoint.type, chargePoint.maxKw, f)}</Field>
            <Field label={t("chargePoint.evseId")} mono>
              {chargePoint.evseId ?? "—"}
            </Field>
            <Field label={t("chargePoint.serial")} mono>
              {chargePoint.serialNumber ?? "—"}
            </Field>
            <Field label={t("chargePoint.site")}>{chargePoint.siteLabel ?? t("chargePoint.noSite")}</Field>
            {SHOWS_TEAMS ? <Field label={t("chargePoint.team")}>{chargePoint.teamName ?? (chargePoint.teamId ? t("chargePoints.teamFallback", { id: chargePoint.teamId }) : "—")}</Field> : null}
            <Field label={t("chargePoint.visibility")}>
              {chargePoint.visibility === "public" ? t("chargePoint.public") : chargePoint.visibility === "private" ? t("chargePoint.private") : "—"}
            </Field>
            <Field label={t("chargePoint.active")}>{chargePoint.isActive === null ? "—" : chargePoint.isActive ? t("chargePoint.yes") : t("chargePoint.no")}</Field>
            <Field label={t("chargePoint.lastConnected")}>{f.dateTime(chargePoint.lastConnectedAt)}</Field>
          </dl>
        </section>

        <section className="space-y-4 rounded-lg border border-slate-200 bg-white p-4" aria-labelledby="cp-location">
          <div>
            <h3 id="cp-location" className="mb-2 font-medium">
              {t("chargePoint.location")}
            </h3>
            <p className="text-sm">{chargePoint.addressLabel ?? (address || t("chargePoint.noAddress"))}</p>
            {address && address !== chargePoint.addressLabel ? <p className="text-sm text-slate-600">{address}</p> : null}
            {mapHref ? (
              <a href={mapHref} className="mt-1 inline-block text-sm text-brand-700 hover:underline" target="_blank" rel="noopener noreferrer">
                {t("chargePoint.map")}
              </a>
            ) : null}
          </div>
          <div>
            <h3 className="mb-2 font-medium">{t("chargePoint.connectors")}</h3>
            {chargePoint.connectors.length === 0 ? (
              <p className="text-sm text-slate-600">{t("chargePoint.noConnectors")}</p>
            ) : (
              <ul className="space-y-1 text-sm" data-testid="connectors">
                {chargePoint.connectors.map((connector) => (
                  <li key={connector.id} className="flex gap-2">
                    <span className="font-mono text-xs leading-5 text-slate-500">#{connector.identifier ?? connector.id}</span>
                    <span>{connector.name ?? t("chargePoint.connector")}</span>
                  </li>
                ))}
              </ul>
            )}
          </div>
        </section>
      </div>

      <section className="space-y-3" aria-labelledby="cp-sessions">
        <div className="flex flex-wrap items-baseline justify-between gap-2">
          <h3 id="cp-sessions" className="font-medium">
            {t("chargePoint.recent")}
          </h3>
          {sessionsHref && config.syncCharges && shared ? (
            <Link href={`${sessionsHref}?chargePoint=${chargePoint.id}`} className="text-sm text-brand-700 hover:underline">
              {t("chargePoint.allSessions")}
            </Link>
          ) : null}
        </div>
        {!config.syncCharges ? (
          <p className="text-sm text-slate-600">{t("chargePoint.notImported")}</p>
        ) : !shared ? (
          <p className="text-sm text-slate-600">{t("chargePoint.notShared")}</p>
        ) : !freshness.charges.asOf ? (
          <p className="text-sm text-slate-600">{t("chargePoint.copying")}</p>
        ) : (
          // Streamed: the details above show at once, the sessions when their read is done.
          <Suspense fallback={<SkeletonLine className="h-24 w-full" />}>
            <RecentSessions installRowId={install.id} chargePointId={chargePoint.id} sessionsHref={sessionsHref} />
          </Suspense>
        )}
      </section>
    </div>
  );
}

function Field({ label, mono, children }: { label: string; mono?: boolean; children: React.ReactNode }) {
  return (
    <>
      <dt className="text-slate-500">{label}</dt>
      <dd className={`min-w-0 break-words ${mono ? "font-mono text-xs leading-5" : ""}`}>{children}</dd>
    </>
  );
}

async function RecentSessions({ installRowId, chargePointId, sessionsHref }: { installRowId: string; chargePointId: string; sessionsHref: string | undefined }) {
  const [sessions, { t, f }] = await Promise.all([recentSessionsOf(installRowId, chargePointId, 10), dashboardI18n()]);
  if (sessions.length === 0) return <p className="text-sm text-slate-600">{t("chargePoint.noSessions")}</p>;
  return (
    <ul className="divide-y divide-slate-100 rounded-lg border border-slate-200 bg-white text-sm" data-testid="recent-sessions">
      {sessions.map((s) => (
        <li key={s.id} className="flex flex-wrap items-center justify-between gap-x-4 gap-y-1 px-3 py-2">
          {sessionsHref ? (
            <Link href={`${sessionsHref}/${s.id}`} className="text-brand-700 hover:underline">
              {f.dateTime(s.startedAt)}
            </Link>
          ) : (
            <span>{f.dateTime(s.startedAt)}</span>
          )}
          <span className="flex flex-wrap items-center gap-3 text-slate-600">
            <span>{f.kwh(s.consumedKwh)}</span>
            <span className="hidden sm:inline">{f.duration(s.startedAt && s.stoppedAt ? s.stoppedAt.getTime() - s.startedAt.getTime() : null)}</span>
            <span>{f.money(s.cost, s.currency, s.currencyDecimals)}</span>
            <SessionStateBadge state={s.state} t={t} />
          </span>
        </li>
      ))}
    </ul>
  );
}
