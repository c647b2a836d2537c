// The Overview as the operator sees it, from the figures lib/dashboard/overview.ts read. A server
// component: only the charts are client components, fed plain arrays.
import Link from "next/link";
import type { CurrencyTotal, Overview, RangeChoice } from "@/lib/dashboard/overview";
import type { ResourceFreshness } from "@/lib/dashboard/freshness";
import { formatCount, formatDate, formatDateTime, formatKwh, formatMoney } from "../../format";
import { DailyBarChart, StatesBarChart } from "./charts";
import { RangePicker } from "./range-picker";
import { chargePointStateStyle } from "../../_components/charge-point-state";
import { DASHBOARD_SECTIONS } from "../../sections";
import { Headline, Tile, TileNote } from "./tiles";
import { RefreshWhileCopying } from "../../_components/refresh-while-copying";


const NOT_IMPORTED = "You chose not to import charging sessions into this app (its configuration in the operator portal), so there are no session figures.";

/**
 * `updating`: the install is ACTIVE, so its copy moves; false while re-authorization is pending
 * (contract §7: the sync has stopped), when the page shows the copy as it is and never polls.
 */
export function OverviewView({ overview, choice, updating }: { overview: Overview; choice: RangeChoice; updating: boolean }) {
  const { freshness, config } = overview;
  const sessionsCopied = !config.syncCharges || freshness.charges.asOf !== null;
  // Nothing to show until a first pass has ended: partial figures would look like real ones.
  if (freshness.chargePoints.asOf === null && (freshness.charges.asOf === null || !config.syncCharges)) {
    return <CopyUnderWay overview={overview} updating={updating} />;
  }
  return (
    <div className="space-y-6" data-testid="overview">
      <div className="space-y-3">
        <div>
          <h2 className="text-lg font-semibold">Overview</h2>
          <p className="text-sm text-slate-600" data-testid="overview-range">
            {rangeSentence(overview)}
          </p>
          <AsOf overview={overview} />
          {updating && !sessionsCopied ? <RefreshWhileCopying /> : null}
        </div>
        <RangePicker choice={choice} range={overview.range} />
        {choice.kind === "default" ? (
          <p className="text-sm text-amber-800" role="status" data-testid="range-rejected">
            {`${choice.rejected} Showing the last ${choice.days} days instead.`}
          </p>
        ) : null}
      </div>

      <div className="grid grid-cols-2 gap-3 lg:grid-cols-4">
        <Headline testId="headline-sessions" label="Sessions" value={sessionsCopied && config.syncCharges ? formatCount(overview.totals.sessions) : "—"} detail="started in the range" />
        <Headline testId="headline-energy" label="Energy delivered" value={sessionsCopied && config.syncCharges ? formatKwh(overview.totals.kwh) : "—"} detail="by those sessions" />
        <Headline
          testId="headline-revenue"
          label="Revenue"
          value={sessionsCopied && config.syncCharges ? headlineRevenue(overview) : "—"}
          detail={sessionsCopied && config.syncCharges ? revenueDetail(overview) : "session prices, as recorded"}
        />
        <Headline
          testId="headline-charge-points"
          label="Charge points"
          value={formatCount(overview.chargePoints.total)}
          detail={`${formatCount(overview.chargePoints.available)} available · ${formatCount(overview.chargePoints.inError)} in error`}
        />
      </div>

      <div className="grid gap-4 lg:grid-cols-2">
        <Tile title="Energy delivered per day (kWh)" testId="tile-energy">
          <SessionFigures overview={overview} sessionsCopied={sessionsCopied}>
            <DailyFigure overview={overview} field="kwh" unit="kWh" color="#059669" />
          </SessionFigures>
        </Tile>
        <Tile title="Sessions per day" testId="tile-sessions">
          <SessionFigures overview={overview} sessionsCopied={sessionsCopied}>
            <DailyFigure overview={overview} field="sessions" unit="sessions" color="#2563eb" />
          </SessionFigures>
        </Tile>
        <Tile title="Charge points by state" testId="tile-states">
          <StatesFigure overview={overview} />
        </Tile>
        <Tile title="Revenue in the range" testId="tile-revenue">
          <SessionFigures overview={overview} sessionsCopied={sessionsCopied}>
            <Revenue overview={overview} />
          </SessionFigures>
        </Tile>
      </div>
    </div>
  );
}

function rangeSentence({ range }: Overview): string {
  switch (range.ends) {
    case "latest-session":
      return `${range.days} days up to ${formatDate(day(range.to))}, the latest session (days in UTC)`;
    case "today":
      return `${range.days} days up to today, ${formatDate(day(range.to))} (days in UTC)`;
    case "custom":
      return range.days === 1 ? `${formatDate(day(range.from))} (UTC)` : `${formatDate(day(range.from))} to ${formatDate(day(range.to))}: ${range.days} days (UTC)`;
  }
}

const day = (value: string) => new Date(`${value}T00:00:00Z`);

function freshnessText(label: string, f: ResourceFreshness): string {
  if (f.asOf === null) return `${label}: still being copied`;
  const failed = f.lastRun && f.lastRun.outcome !== "completed" && f.lastRun.outcome !== "skipped" && f.lastRun.startedAt > f.asOf;
  return `${label} as of ${formatDateTime(f.asOf)}${failed ? " (the latest update did not finish)" : ""}`;
}

/** "As of": when each part of the copy was last complete; the figures are from then, whatever the service says now. */
function AsOf({ overview }: { overview: Overview }) {
  const parts = [freshnessText("Charge points", overview.freshness.chargePoints)];
  if (overview.config.syncCharges) parts.push(freshnessText("sessions", overview.freshness.charges));
  return (
    <p className="text-xs text-slate-500" data-testid="overview-as-of">
      {parts.join("; ")}. Figures come from the app&rsquo;s copy of your data.
    </p>
  );
}

function SessionFigures({ overview, sessionsCopied, children }: { overview: Overview; sessionsCopied: boolean; children: React.ReactNode }) {
  if (!overview.config.syncCharges) return <TileNote>{NOT_IMPORTED}</TileNote>;
  if (!sessionsCopied) return <TileNote>Sessions are still being copied from the service ({formatCount(overview.copied.charges)} so far); this fills in as they arrive.</TileNote>;
  if (overview.totals.sessions === 0) return <TileNote>No sessions started in this range.</TileNote>;
  return <>{children}</>;
}

function DailyFigure({ overview, field, unit, color }: { overview: Overview; field: "kwh" | "sessions"; unit: string; color: string }) {
  const data = overview.days.map((d) => ({ day: d.day, value: d[field] }));
  const busiest = overview.days.reduce((best, d) => (d[field] > best[field] ? d : best), overview.days[0]!);
  const total = field === "kwh" ? formatKwh(overview.totals.kwh) : `${formatCount(overview.totals.sessions)} sessions`;
  const summary = `${total} over ${overview.range.days} days; the busiest day was ${formatDate(day(busiest.day))} with ${field === "kwh" ? formatKwh(busiest.kwh) : `${formatCount(busiest.sessions)} sessions`}.`;
  return (
    <figure>
      <DailyBarChart data={data} unit={unit} color={color} title={`${unit === "kWh" ? "Energy delivered" : "Sessions"} per day`} />
      <figcaption className="mt-2 text-xs text-slate-600">{summary}</figcaption>
      <details className="mt-2 text-sm">
        <summary className="cursor-pointer text-brand-700">Show as a table</summary>
        {/* It scrolls, so it takes keyboard focus (WCAG 2.1.1), as app/components/data-table.tsx explains. */}
        <div className="mt-2 max-h-64 overflow-y-auto" role="region" aria-label={`${field === "kwh" ? "Energy" : "Sessions"} per day, as a table`} tabIndex={0}>
          <table className="w-full text-left text-sm">
            <thead className="text-slate-600">
              <tr>
                <th className="py-1 font-medium">Day (UTC)</th>
                <th className="py-1 text-right font-medium">{field === "kwh" ? "Energy" : "Sessions"}</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 tabular-nums">
              {overview.days.map((d) => (
                <tr key={d.day}>
                  <td className="py-1">{formatDate(day(d.day))}</td>
                  <td className="py-1 text-right">{field === "kwh" ? formatKwh(d.kwh) : formatCount(d.sessions)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

function StatesFigure({ overview }: { overview: Overview }) {
  if (overview.states.length === 0) return <TileNote>No charge points in the copy{overview.config.siteIds.length > 0 ? " for the sites you chose" : ""}.</TileNote>;
  const data = overview.states.map((s) => ({ ...chargePointStateStyle(s.state), count: s.count }));
  return (
    <figure>
      <StatesBarChart data={data.map(({ label, count, color }) => ({ label, count, color }))} title="Charge points by state" />
      <figcaption className="sr-only">Charge points by state: {data.map((s) => `${s.label} ${s.count}`).join(", ")}.</figcaption>
      <ul className="mt-3 grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-2" data-testid="state-list">
        {data.map((s) => (
          <li key={s.label} className="flex items-center justify-between gap-2">
            <span className="flex min-w-0 items-center gap-2">
              {/* The bar's own colour, so each dot matches its bar (states of one tone differ in the chart). */}
              <span className="h-2.5 w-2.5 shrink-0 rounded-full" style={{ backgroundColor: s.color }} aria-hidden="true" />
              <span className="truncate">{s.label}</span>
            </span>
            <span className="tabular-nums text-slate-700">{formatCount(s.count)}</span>
          </li>
        ))}
      </ul>
    </figure>
  );
}

/**
 * The headline's amount: the reporting currency's total when sessions were recorded in it, else what
 * was taken, in its own currency (A78: never converted). A reporting currency with no session in it
 * is NOT a zero: "NOK 0.00" beside "€883.88" taken would be false, so the detail line says instead
 * that none of it is in that currency (revenueDetail).
 */
function headlineRevenue(overview: Overview): string {
  const first = overview.revenue[0];
  if (!first) return "—";
  return formatMoney(first.amount, first.currency, first.decimals);
}

/** What the headline's amount is: which currency, and what else was taken. */
function revenueDetail(overview: Overview): string {
  const reporting = overview.config.currency;
  const others = overview.revenue.length - 1;
  const andOthers = others > 0 ? `and ${others} other currenc${others > 1 ? "ies" : "y"}` : "";
  if (reporting && overview.revenue.length > 0 && overview.revenue[0]!.currency !== reporting) {
    return [`none in ${reporting}, your reporting currency`, andOthers].filter(Boolean).join("; ");
  }
  return andOthers || "session prices, as recorded";
}

function Revenue({ overview }: { overview: Overview }) {
  const reporting = overview.config.currency;
  const rows: CurrencyTotal[] = [...overview.revenue];
  const others = rows.filter((r) => r.currency !== reporting).map((r) => r.currency ?? "no currency");
  return (
    <div className="space-y-3">
      <ul className="divide-y divide-slate-100" data-testid="revenue-list">
        {reporting && !rows.some((r) => r.currency === reporting) ? (
          <li className="flex justify-between gap-2 py-2 text-sm">
            <span>{`${reporting} (your reporting currency)`}</span>
            <span className="text-slate-500">{`no sessions recorded in ${reporting}`}</span>
          </li>
        ) : null}
        {rows.map((r) => (
          <li key={r.currency ?? "none"} className="flex flex-wrap justify-between gap-x-2 py-2" data-currency={r.currency ?? ""}>
            <span className="text-sm text-slate-600">
              {r.currency ?? "No currency"}
              {r.currency === reporting ? " (your reporting currency)" : ""} · {formatCount(r.sessions)} sessions
            </span>
            <span className="font-semibold tabular-nums">{formatMoney(r.amount, r.currency, r.decimals)}</span>
          </li>
        ))}
      </ul>
      <p className="text-xs text-slate-600" data-testid="revenue-note">
        {reporting
          ? others.length > 0
            ? `Some sessions are recorded in ${others.join(", ")}, not in your reporting currency ${reporting}. They are shown in their own currency and never converted.`
            : `All sessions in this range are recorded in ${reporting}, your reporting currency.`
          : "No reporting currency is chosen in the app's configuration: amounts are shown in the currency each session was recorded in, never converted."}{" "}
        Revenue is the sum of the sessions&rsquo; prices.
      </p>
    </div>
  );
}

/** Before the first pass over the data has ended: what is happening, how far it got, and where else to go. */
function CopyUnderWay({ overview, updating }: { overview: Overview; updating: boolean }) {
  const { chargePoints, charges } = overview.freshness;
  const started = [chargePoints.passStartedAt, charges.passStartedAt].filter((d): d is Date => d !== null).sort((a, b) => a.getTime() - b.getTime())[0];
  return (
    <div className="space-y-4 rounded-lg border border-slate-200 bg-white p-6" data-testid="overview-copying" data-updating={updating ? "yes" : "no"}>
      <h2 className="text-lg font-semibold">{updating ? "Your data is being copied from the service" : "The first copy of your data did not finish"}</h2>
      <p className="text-slate-700">
        {updating
          ? "This page fills in as it arrives. The app keeps its own copy so pages are quick and stay readable if the service is briefly away."
          : "The app stopped reading your data before its first copy was complete. It carries on once you approve the app's new access (see above)."}
      </p>
      <p className="text-sm text-slate-600" data-testid="copy-progress">
        {[
          started ? `Copying since ${formatDateTime(started)}:` : "The first copy has not started yet.",
          `${formatCount(overview.copied.chargePoints)} charge points${overview.config.syncCharges ? ` and ${formatCount(overview.copied.charges)} sessions` : ""} copied so far.`,
          overview.config.syncCharges ? "" : "You chose not to import charging sessions.",
        ]
          .filter(Boolean)
          .join(" ")}
      </p>
      {updating ? <RefreshWhileCopying /> : null}
      <nav aria-label="Other sections">
        <p className="text-sm text-slate-600">Meanwhile:</p>
        <ul className="mt-1 flex flex-wrap gap-x-4 gap-y-1 text-sm">
          {DASHBOARD_SECTIONS.map((s) => (
            <li key={s.href}>
              <Link href={s.href} className="text-brand-700 underline">
                {s.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
    </div>
  );
}
