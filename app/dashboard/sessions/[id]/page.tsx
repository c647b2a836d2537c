// GET /dashboard/sessions/[id]: one charging session of the install, from the local copy. An id the
// install does not have (unknown, removed, or another install's) is a 404 that says nothing about
// whose it is. No loading boundary above this page, so that 404 is a real status (see
// ../../charge-points/(list)/page.tsx).
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { currentOperator } from "@/lib/auth/operator-session";
import { readDashboardConfig } from "@/lib/dashboard/config";
import { loadFreshness } from "@/lib/dashboard/freshness";
import { loadSession } from "@/lib/dashboard/sessions";
import { loadDashboardInstall } from "@/lib/installs/dashboard";
import { dashboardI18n } from "@/lib/i18n/request";
import { sessionsTranslator } from "../i18n";
import { AsOf } from "../../_components/as-of";
import { SessionStateBadge, sessionReasonLabel, sessionTypeLabel } from "../../_components/session-state";

export async function generateMetadata(): Promise<Metadata> {
  return { title: sessionsTranslator((await dashboardI18n()).locale)("title.session") };
}

export const dynamic = "force-dynamic";

export default async function SessionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install) return null;
  const [session, freshness] = await Promise.all([loadSession(install.id, id), loadFreshness(install.id)]);
  // With syncCharges off the copy holds no charges (lib/sync/config.ts), so every id is unknown here.
  if (!session) notFound();
  const config = readDashboardConfig(install.config);
  const durationMs = session.startedAt && session.stoppedAt ? session.stoppedAt.getTime() - session.startedAt.getTime() : null;
  // Dates, amounts and energy in the operator's language and zone (lib/i18n/request.ts).
  const { f, locale } = await dashboardI18n();
  const t = sessionsTranslator(locale);
  const money = (amount: number | null) => f.money(amount, session.currency, session.currencyDecimals);

  return (
    <div className="space-y-6" data-testid="session-detail" data-session-id={session.id}>
      <div className="space-y-1">
        <Link href="/dashboard/sessions" className="text-sm text-brand-700 hover:underline">
          {t("session.back")}
        </Link>
        <div className="flex flex-wrap items-center gap-3">
          <h2 className="text-xl font-semibold">{t("session.title", { id: session.id })}</h2>
          <SessionStateBadge state={session.state} t={t} />
        </div>
        {freshness.charges.asOf ? <AsOf asOf={freshness.charges.asOf} /> : null}
      </div>

      <div className="grid gap-4 md:grid-cols-2">
        <section className="rounded-lg border border-slate-200 bg-white p-4" aria-labelledby="session-when">
          <h3 id="session-when" className="mb-3 font-medium">
            {t("session.whereWhen")}
          </h3>
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
            <Field label={t("session.chargePoint")}>
              {session.chargePointId ? (
                <Link href={`/dashboard/charge-points/${session.chargePointId}`} className="break-words text-brand-700 hover:underline" data-testid="session-charge-point">
                  {session.chargePointName ?? t("sessions.chargePointFallback", { id: session.chargePointId })}
                </Link>
              ) : (
                "—"
              )}
            </Field>
            <Field label={t("session.started")}>{f.dateTime(session.startedAt)}</Field>
            <Field label={t("session.stopped")}>{f.dateTime(session.stoppedAt)}</Field>
            {session.completedAt ? <Field label={t("session.completed")}>{f.dateTime(session.completedAt)}</Field> : null}
            {session.failedAt ? <Field label={t("session.failed")}>{f.dateTime(session.failedAt)}</Field> : null}
            <Field label={t("session.duration")}>{f.duration(durationMs)}</Field>
            <Field label={t("session.type")}>{sessionTypeLabel(session.type, t)}</Field>
            {session.stopReason ? <Field label={t("session.stopReason")}>{sessionReasonLabel(session.stopReason, t)}</Field> : null}
            {session.failureReason ? <Field label={t("session.failureReason")}>{sessionReasonLabel(session.failureReason, t)}</Field> : null}
          </dl>
        </section>

        <section className="rounded-lg border border-slate-200 bg-white p-4" aria-labelledby="session-amounts">
          <h3 id="session-amounts" className="mb-3 font-medium">
            {t("session.amounts")}
          </h3>
          <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
            <Field label={t("session.energy")}>{f.kwh(session.consumedKwh)}</Field>
            <Field label={t("session.meterStart")}>{f.kwh(session.startMeterKwh)}</Field>
            <Field label={t("session.meterEnd")}>{f.kwh(session.endMeterKwh)}</Field>
            <Field label={t("session.price")}>{money(session.price)}</Field>
            <Field label={t("session.cost")}>{money(session.cost)}</Field>
          </dl>
          {config.currency && session.currency && session.currency !== config.currency ? (
            <p className="mt-3 text-xs text-slate-600" data-testid="currency-note">
              {t("session.currencyNote", { currency: session.currency, reporting: config.currency })}
            </p>
          ) : null}
        </section>
      </div>
    </div>
  );
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <>
      <dt className="text-slate-500">{label}</dt>
      <dd className="min-w-0 break-words">{children}</dd>
    </>
  );
}
