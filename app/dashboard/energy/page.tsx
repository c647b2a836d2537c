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
import { ReauthorizeBanner } from "../install-status";
import { EnergyChart } from "./energy-chart";

export const metadata: Metadata = { title: "Energy" };

export const dynamic = "force-dynamic";

/** public-facts.md "Charge" states, in words; anything else is shown as given. */
const SESSION_STATES: Record<string, string> = {
  paying: "Paying",
  reserved: "Reserved",
  starting: "Starting",
  charging: "Charging",
  stopping: "Stopping",
  paused: "Paused",
  scheduled: "Scheduled",
  stopped: "Stopped",
  releasing: "Releasing",
  released: "Released",
  completed: "Completed",
  other: "Other",
};

export default async function EnergyPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = EnergyQuerySchema.parse(await searchParams);
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install || !showsLocalCopy(install.status)) return null;
  // This page reads the service live and keeps no copy: while re-authorization is pending it calls
  // nothing (contract §7) and says why, beside the banner the layout shows.
  if (install.status !== "ACTIVE") return <EnergyPaused />;
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
          Energy
        </h1>
        <span className="rounded-full bg-violet-100 px-2 py-0.5 text-xs font-medium text-violet-800">Beta</span>
      </div>
      <p className="text-sm text-slate-600">The charge history of one charging point (EVSE), read live from the service.</p>
      <Body view={view} />
    </section>
  );
}

function EnergyPaused() {
  return (
    <section className="space-y-4" aria-labelledby="energy-heading">
      <h1 id="energy-heading" className="text-xl font-semibold">
        Energy
      </h1>
      <Notice state="paused" title="Paused until you approve the app’s new access">
        <p>This page reads the charge history from the service each time, and keeps no copy of it. The app reads nothing from the service until you approve its new access with the banner above.</p>
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

function Body({ view }: { view: EnergyView }) {
  switch (view.state) {
    case "not_granted":
      return (
        <Notice state="not_granted" title="This app may not read energy data">
          <p>
            You have not allowed this app to read the energy data of your charge points (the permission{" "}
            <span className="font-mono">energy:read</span>), so nothing is shown here. If the app&rsquo;s provider asks for it, a banner on
            this dashboard lets you review and approve it.
          </p>
        </Notice>
      );
    case "no_evses":
      return (
        <Notice state="no_evses" title="No charging points to show yet">
          <p>The app has not finished copying your charge points from the service. Once it has, pick one here to see its charge history.</p>
        </Notice>
      );
    default:
      return (
        <>
          <EnergyForm view={view} />
          <Result view={view} />
        </>
      );
  }
}

/** A plain GET form: the choice lives in the address, so it can be shared, reloaded and used without JavaScript. */
function EnergyForm({ view }: { view: Extract<EnergyView, { evses: unknown }> }) {
  return (
    <form method="get" className="grid gap-3 rounded-lg border border-slate-200 bg-white p-4 sm:grid-cols-[1fr_auto_auto_auto] sm:items-end" data-testid="energy-form">
      <label className="flex min-w-0 flex-col gap-1 text-sm">
        <span className="text-slate-600">Charging point</span>
        <select name="evse" defaultValue={view.selected.key} className="w-full min-w-0 rounded-md border border-slate-300 px-2 py-1.5">
          {view.evses.map((evse) => (
            <option key={evse.key} value={evse.key}>
              {evse.label}
            </option>
          ))}
        </select>
      </label>
      <label className="flex flex-col gap-1 text-sm">
        <span className="text-slate-600">From (UTC)</span>
        <input type="date" name="from" defaultValue={view.query.from ?? ""} className="rounded-md border border-slate-300 px-2 py-1.5" />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        <span className="text-slate-600">To (UTC)</span>
        <input type="date" name="to" defaultValue={view.query.to ?? ""} className="rounded-md border border-slate-300 px-2 py-1.5" />
      </label>
      <button type="submit" className="rounded-md bg-slate-900 px-4 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
        Show
      </button>
      <p className="text-xs text-slate-500 sm:col-span-4">
        EVSE <span className="font-mono break-all">{view.selected.evseId}</span>. Leave the dates empty for all of its history.
      </p>
    </form>
  );
}

function Result({ view }: { view: Exclude<EnergyView, { state: "not_granted" | "no_evses" }> }) {
  switch (view.state) {
    case "bad_range":
      return (
        <Notice state="bad_range" title="Check the dates">
          <p>The first day must not be after the last one, and a range can cover at most a year.</p>
        </Notice>
      );
    case "not_enabled":
      return (
        <Notice state="not_enabled" title="Energy history is in beta, and not enabled for your account">
          <p>
            This page uses the service&rsquo;s charge history per EVSE, a beta feature that the service switches on for each operator
            account on request. It is not enabled for your account yet.
          </p>
          <p>
            To ask for it, contact your business partner contact at the service. Once they enable it, this page shows your data; nothing
            needs to change in this app.
          </p>
        </Notice>
      );
    case "not_understood":
      return (
        <Notice state="not_understood" title="The service answered in a shape this app does not understand yet">
          <p>
            The energy history is a beta feature whose answer may change. The service&rsquo;s latest answer is not one this version of
            the app can read, so nothing is shown rather than something wrong. The app&rsquo;s provider has been told in its logs.
          </p>
        </Notice>
      );
    case "failed":
      return <FailureNotice failure={view.failure} />;
    case "ok":
      return <History view={view} />;
  }
}

function FailureNotice({ failure }: { failure: Extract<EnergyView, { state: "failed" }>["failure"] }) {
  let text: string;
  switch (failure.kind) {
    case "rate_limited":
      text =
        failure.retryInSeconds !== undefined
          ? `Busy: this install has used its request budget at the service for now. Try again in ${Math.max(1, failure.retryInSeconds)} s.`
          : "Busy: the service asked the app to slow down. Try again in a minute.";
      break;
    case "timeout":
      text = "The service took too long to answer. Try again in a moment.";
      break;
    case "unavailable":
      text = "The service is not answering right now. Try again in a moment.";
      break;
    case "not_found":
      text = "The service does not know this charging point's history. If this happens for every charging point, the app's setting for this beta operation (ENERGY_API_PATH) may need updating.";
      break;
    case "bad_request":
      text = `The service did not accept the request${failure.serviceMessage ? `: ${failure.serviceMessage}` : "."}`;
      break;
    case "unauthorized":
    case "reinstall_needed":
    case "revoked":
    case "no_grant":
      text = "The app lost its access to your data. Connect it again from the operator portal.";
      break;
    default:
      text = "The service answered in a way the app did not expect. Try again later.";
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
  const { f } = await dashboardI18n();
  if (view.records.length === 0) {
    return (
      <Notice state="empty" title="No charging sessions">
        <p>This charging point has no sessions in the chosen range.</p>
      </Notice>
    );
  }
  return (
    <div className="space-y-4" data-testid="energy-state" data-state="ok">
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3">
        <div className="rounded-lg border border-slate-200 bg-white p-3">
          <dt className="text-xs text-slate-500">Energy delivered</dt>
          <dd className="text-lg font-semibold" data-testid="energy-total">
            {f.kwh(view.totalKwh)}
          </dd>
        </div>
        <div className="rounded-lg border border-slate-200 bg-white p-3">
          <dt className="text-xs text-slate-500">Sessions</dt>
          <dd className="text-lg font-semibold">{f.count(view.records.length)}</dd>
        </div>
        <div className="col-span-2 rounded-lg border border-slate-200 bg-white p-3 sm:col-span-1">
          <dt className="text-xs text-slate-500">Days with sessions</dt>
          <dd className="text-lg font-semibold">{f.count(view.days.length)}</dd>
        </div>
      </dl>
      {view.truncated ? (
        <p className="text-sm text-slate-600">Showing the first {f.count(HISTORY_LIMIT)} sessions of this range: choose a shorter range to see the rest.</p>
      ) : null}
      {view.skipped > 0 ? (
        <p className="text-sm text-amber-800" data-testid="energy-skipped">
          {f.count(view.skipped)} session{view.skipped === 1 ? " was" : "s were"} left out: the service sent them in a form this app
          does not read yet.
        </p>
      ) : null}
      <figure className="rounded-lg border border-slate-200 bg-white p-3" data-testid="energy-chart">
        <figcaption className="mb-2 text-sm font-medium text-slate-700">Energy per day (kWh, UTC days)</figcaption>
        <EnergyChart days={view.days} />
      </figure>
      <div className="overflow-hidden rounded-lg border border-slate-200 bg-white">
        <table className="w-full divide-y divide-slate-200 text-sm">
          <thead className="bg-slate-50 text-left text-slate-600">
            <tr>
              <th className="px-3 py-2 font-medium">Started</th>
              <th className="hidden px-3 py-2 font-medium sm:table-cell">Duration</th>
              <th className="px-3 py-2 text-right font-medium">Energy</th>
              <th className="hidden px-3 py-2 font-medium sm:table-cell">State</th>
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
                <td className="hidden px-3 py-2 sm:table-cell">{record.state ? (SESSION_STATES[record.state] ?? record.state) : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
