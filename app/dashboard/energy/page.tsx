// /dashboard/energy: one EVSE's charge history from the service's beta operation (contract §4.3),
// read live (lib/dashboard/energy.ts). The operator picks an EVSE of their charge points (from the
// local copy) and a range of days; the page shows energy per day as a chart, and the sessions.
import type { Metadata } from "next";
import { currentOperator } from "@/lib/auth/operator-session";
import { HISTORY_LIMIT, EnergyQuerySchema, loadEnergy, type EnergyView } from "@/lib/dashboard/energy";
import { fetchInstallSummary, loadDashboardInstall, restartIfInstallLeftActive, showsLocalCopy } from "@/lib/installs/dashboard";
import { dashboardI18n } from "@/lib/i18n/request";
import { PASSING_FAILURES } from "../_components/read-failure";
import { RetryButton } from "../_components/retry-button";
import { sessionStateLabel } from "../_components/session-state";
import { ReauthorizeBanner } from "../install-status";
import { EnergyChart } from "./energy-chart";
import { energyTranslator, type EnergyTranslator } from "./i18n";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await words()).t("energy.title") };
}

export const dynamic = "force-dynamic";

/**
 * The section's words in the operator's language (./i18n.ts: its own catalogue, then the core one),
 * and the request's formatter; lib/i18n/request.ts picks the language, once per request.
 */
async function words() {
  const i18n = await dashboardI18n();
  return { t: energyTranslator(i18n.locale), f: i18n.f, core: i18n.t };
}

/** A sentence with one piece shown as code (a scope): split where its placeholder stands. */
function withCode(t: EnergyTranslator, key: "energy.notGranted.text", code: string) {
  const [before, after] = t(key, { scope: "\u0000" }).split("\u0000");
  return (
    <>
      {before}
      <span className="font-mono">{code}</span>
      {after}
    </>
  );
}

export default async function EnergyPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = EnergyQuerySchema.parse(await searchParams);
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install || !showsLocalCopy(install.status)) return null;
  // This page reads the service live and keeps no copy: while re-authorization is pending it calls
  // nothing (contract §7) and says why, beside the banner the layout shows.
  const { t } = await words();
  if (install.status !== "ACTIVE") return <EnergyPaused t={t} />;
  const view = await loadEnergy(install, query);
  // A failed call may have moved the install out of ACTIVE (flagged, revoked, chain lost): render
  // again so the panel above says so too (lib/installs/dashboard.ts, restartIfInstallLeftActive).
  if (view.state === "failed") await restartIfInstallLeftActive(install.id);

  if (view.state === "failed" && view.failure.kind === "needs_reauth") {
    // The call has just flagged the install (contract §7): show the banner now, not on the next visit.
    const flagged = await fetchInstallSummary(install.id);
    return <ReauthorizeBanner reauthUrl={flagged?.reauthUrl ?? null} />;
  }

  return (
    <section className="space-y-4" aria-labelledby="energy-heading">
      <div className="flex flex-wrap items-baseline gap-2">
        <h1 id="energy-heading" className="text-xl font-semibold">
          {t("energy.title")}
        </h1>
        <span className="rounded-full bg-violet-100 px-2 py-0.5 text-xs font-medium text-violet-800">{t("energy.beta")}</span>
      </div>
      <p className="text-sm text-slate-600">{t("energy.intro")}</p>
      <Body view={view} t={t} />
    </section>
  );
}

function EnergyPaused({ t }: { t: EnergyTranslator }) {
  return (
    <section className="space-y-4" aria-labelledby="energy-heading">
      <h1 id="energy-heading" className="text-xl font-semibold">
        {t("energy.title")}
      </h1>
      <Notice state="paused" title={t("energy.paused.title")}>
        <p>{t("energy.paused.text")}</p>
      </Notice>
    </section>
  );
}

function Notice({ state, title, children }: { state: string; title: string; children: React.ReactNode }) {
  return (
    <div className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-700" data-testid="energy-state" data-state={state}>
      <h2 className="font-semibold text-slate-900">{title}</h2>
      <div className="mt-1 space-y-2">{children}</div>
    </div>
  );
}

function Body({ view, t }: { view: EnergyView; t: EnergyTranslator }) {
  switch (view.state) {
    case "not_granted":
      return (
        <Notice state="not_granted" title={t("energy.notGranted.title")}>
          <p>{withCode(t, "energy.notGranted.text", "energy:read")}</p>
        </Notice>
      );
    case "no_evses":
      return (
        <Notice state="no_evses" title={t("energy.noEvses.title")}>
          <p>{t("energy.noEvses.text")}</p>
        </Notice>
      );
    default:
      return (
        <>
          <EnergyForm view={view} t={t} />
          <Result view={view} t={t} />
        </>
      );
  }
}

/** A plain GET form: the choice lives in the address, so it can be shared, reloaded and used without JavaScript. */
function EnergyForm({ view, t }: { view: Extract<EnergyView, { evses: unknown }>; t: EnergyTranslator }) {
  const [hintBefore, hintAfter] = t("energy.form.hint", { evseId: "\u0000" }).split("\u0000");
  return (
    <form method="get" className="grid gap-3 rounded-lg border border-slate-200 bg-white p-4 sm:grid-cols-[1fr_auto_auto_auto] sm:items-end" data-testid="energy-form">
      <label className="flex min-w-0 flex-col gap-1 text-sm">
        <span className="text-slate-600">{t("energy.form.evse")}</span>
        <select name="evse" defaultValue={view.selected.key} className="w-full min-w-0 rounded-md border border-slate-300 px-2 py-1.5">
          {view.evses.map((evse) => (
            <option key={evse.key} value={evse.key}>
              {evse.label}
            </option>
          ))}
        </select>
      </label>
      <label className="flex flex-col gap-1 text-sm">
        <span className="text-slate-600">{t("energy.form.from")}</span>
        <input type="date" name="from" defaultValue={view.query.from ?? ""} className="rounded-md border border-slate-300 px-2 py-1.5" />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        <span className="text-slate-600">{t("energy.form.to")}</span>
        <input type="date" name="to" defaultValue={view.query.to ?? ""} className="rounded-md border border-slate-300 px-2 py-1.5" />
      </label>
      <button type="submit" className="rounded-md bg-slate-900 px-4 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
        {t("energy.form.show")}
      </button>
      <p className="text-xs text-slate-500 sm:col-span-4">
        {hintBefore}
        <span className="font-mono break-all">{view.selected.evseId}</span>
        {hintAfter}
      </p>
    </form>
  );
}

function Result({ view, t }: { view: Exclude<EnergyView, { state: "not_granted" | "no_evses" }>; t: EnergyTranslator }) {
  switch (view.state) {
    case "bad_range":
      return (
        <Notice state="bad_range" title={t("energy.badRange.title")}>
          <p>{t("energy.badRange.text")}</p>
        </Notice>
      );
    case "not_enabled":
      return (
        <Notice state="not_enabled" title={t("energy.notEnabled.title")}>
          <p>{t("energy.notEnabled.text")}</p>
          <p>{t("energy.notEnabled.ask")}</p>
        </Notice>
      );
    case "not_understood":
      return (
        <Notice state="not_understood" title={t("energy.notUnderstood.title")}>
          <p>{t("energy.notUnderstood.text")}</p>
        </Notice>
      );
    case "failed":
      return <FailureNotice failure={view.failure} t={t} />;
    case "ok":
      return <History view={view} />;
  }
}

function FailureNotice({ failure, t }: { failure: Extract<EnergyView, { state: "failed" }>["failure"]; t: EnergyTranslator }) {
  let text: string;
  switch (failure.kind) {
    case "rate_limited":
      text = failure.retryInSeconds !== undefined ? t("energy.failure.busyFor", { seconds: Math.max(1, failure.retryInSeconds) }) : t("energy.failure.busy");
      break;
    case "timeout":
      text = t("energy.failure.timeout");
      break;
    case "unavailable":
      text = t("energy.failure.unavailable");
      break;
    case "not_found":
      text = t("energy.failure.notFound");
      break;
    case "bad_request":
      // The service's own message is shown as given: it is about the request, and holds no secret.
      text = failure.serviceMessage ? t("energy.failure.badRequestWith", { message: failure.serviceMessage }) : t("energy.failure.badRequest");
      break;
    case "unauthorized":
    case "reinstall_needed":
    case "revoked":
    case "no_grant":
      text = t("energy.failure.lostAccess");
      break;
    default:
      text = t("energy.failure.unexpected");
  }
  return (
    <div className="space-y-3 rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900" role="alert" data-testid="energy-state" data-state="failed" data-reason={failure.kind}>
      <p>{text}</p>
      {/* A failure that passes by itself gets a way to ask again without retyping the form. */}
      {PASSING_FAILURES.has(failure.kind) ? <RetryButton /> : null}
    </div>
  );
}

async function History({ view }: { view: Extract<EnergyView, { state: "ok" }> }) {
  const { t, f, core } = await words();
  if (view.records.length === 0) {
    return (
      <Notice state="empty" title={t("energy.empty.title")}>
        <p>{t("energy.empty.text")}</p>
      </Notice>
    );
  }
  return (
    <div className="space-y-4" data-testid="energy-state" data-state="ok">
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3">
        <div className="rounded-lg border border-slate-200 bg-white p-3">
          <dt className="text-xs text-slate-500">{t("energy.total")}</dt>
          <dd className="text-lg font-semibold" data-testid="energy-total">
            {f.kwh(view.totalKwh)}
          </dd>
        </div>
        <div className="rounded-lg border border-slate-200 bg-white p-3">
          <dt className="text-xs text-slate-500">{t("energy.sessions")}</dt>
          <dd className="text-lg font-semibold">{f.count(view.records.length)}</dd>
        </div>
        <div className="col-span-2 rounded-lg border border-slate-200 bg-white p-3 sm:col-span-1">
          <dt className="text-xs text-slate-500">{t("energy.days")}</dt>
          <dd className="text-lg font-semibold">{f.count(view.days.length)}</dd>
        </div>
      </dl>
      {view.truncated ? (
        <p className="text-sm text-slate-600">{t("energy.truncated", { limit: f.count(HISTORY_LIMIT) })}</p>
      ) : null}
      {view.skipped > 0 ? (
        <p className="text-sm text-amber-800" data-testid="energy-skipped">
          {t.plural("energy.skipped", view.skipped)}
        </p>
      ) : null}
      <figure className="rounded-lg border border-slate-200 bg-white p-3" data-testid="energy-chart">
        <figcaption className="mb-2 text-sm font-medium text-slate-700">{t("energy.chart.caption")}</figcaption>
        <EnergyChart days={view.days} />
      </figure>
      <div className="overflow-hidden rounded-lg border border-slate-200 bg-white">
        <table className="w-full divide-y divide-slate-200 text-sm">
          <thead className="bg-slate-50 text-left text-slate-600">
            <tr>
              <th className="px-3 py-2 font-medium">{t("energy.table.started")}</th>
              <th className="hidden px-3 py-2 font-medium sm:table-cell">{t("energy.table.duration")}</th>
              <th className="px-3 py-2 text-right font-medium">{t("energy.table.energy")}</th>
              <th className="hidden px-3 py-2 font-medium sm:table-cell">{t("energy.table.state")}</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100" data-testid="energy-sessions">
            {view.records.map((record, index) => (
              <tr key={record.chargeId ?? `${record.startedAt}-${index}`}>
                <td className="px-3 py-2">{f.dateTime(new Date(record.startedAt))}</td>
                <td className="hidden px-3 py-2 sm:table-cell">
                  {f.duration(
                    record.durationSeconds !== null && record.durationSeconds !== undefined
                      ? record.durationSeconds * 1000
                      : record.stoppedAt
                        ? Date.parse(record.stoppedAt) - Date.parse(record.startedAt)
                        : null,
                  )}
                </td>
                <td className="px-3 py-2 text-right tabular-nums">{f.kwh(record.energyKwh)}</td>
                <td className="hidden px-3 py-2 sm:table-cell">{record.state ? sessionStateLabel(record.state, core) : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
