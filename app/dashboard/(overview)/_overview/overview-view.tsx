// The Overview as the operator sees it, from the figures lib/dashboard/overview.ts read. A server
// component: only the charts are client components, fed plain arrays. Every word comes from the
// catalogue and every figure from the formatter module, in the operator's language and zone
// (lib/i18n/request.ts); the days are the zone's days, and the page says which zone.
import Link from "next/link";
import type { CurrencyTotal, Overview, RangeChoice, SessionsState } from "@/lib/dashboard/overview";
import type { ResourceFreshness } from "@/lib/dashboard/freshness";
import { dashboardI18n, type DashboardI18n } from "@/lib/i18n/request";
import { DailyBarChart, StatesBarChart } from "./charts";
import { RangePicker } from "./range-picker";
import { chargePointStateStyle } from "../../_components/charge-point-state";
import { DASHBOARD_SECTIONS, sectionLabel } from "../../sections";
import { Headline, Tile, TileNote } from "./tiles";
import { RefreshWhileCopying } from "../../_components/refresh-while-copying";
import { MAX_RANGE_DAYS, RANGE_PRESETS } from "@/lib/dashboard/overview";

/**
 * `updating`: the install is ACTIVE, so its copy moves; false while re-authorization is pending
 * (contract §7: the sync has stopped), when the page shows the copy as it is and never polls.
 */
export async function OverviewView({ overview, choice, updating }: { overview: Overview; choice: RangeChoice; updating: boolean }) {
  const i18n = await dashboardI18n();
  const { t, f } = i18n;
  const { freshness, sessions } = overview;
  // Nothing to show until a first pass has ended: partial figures would look like real ones.
  if (freshness.chargePoints.asOf === null && sessions !== "copied") {
    return <CopyUnderWay overview={overview} updating={updating} i18n={i18n} />;
  }
  return (
    <div className="space-y-6" data-testid="overview">
      <div className="space-y-3">
        <div>
          <h2 className="text-lg font-semibold">{t("overview.title")}</h2>
          <p className="text-sm text-slate-600" data-testid="overview-range">
            {rangeSentence(overview, i18n)}
          </p>
          <AsOf overview={overview} i18n={i18n} />
          {/* Only a copy under way is waited for: sessions not shared or not imported will never come. */}
          {updating && sessions === "copying" ? <RefreshWhileCopying /> : null}
        </div>
        <RangePicker choice={choice} range={overview.range} t={t} />
        {choice.kind === "default" ? (
          <p className="text-sm text-amber-800" role="status" data-testid="range-rejected">
            {t("overview.rangeRejected", { reason: t(`overview.rejected.${choice.rejected}`, { max: MAX_RANGE_DAYS, choices: RANGE_PRESETS.join(", ") }), days: choice.days })}
          </p>
        ) : null}
      </div>

      <div className="grid grid-cols-2 gap-3 lg:grid-cols-4">
        <Headline
          testId="headline-sessions"
          label={t("overview.headline.sessions")}
          value={sessions === "copied" ? f.count(overview.totals.sessions) : sessionsPlaceholder(sessions, i18n)}
          detail={sessions === "not_shared" ? t("overview.headline.notSharedDetail") : t("overview.headline.sessionsDetail")}
        />
        <Headline
          testId="headline-energy"
          label={t("overview.headline.energy")}
          value={sessions === "copied" ? f.kwh(overview.totals.kwh) : sessionsPlaceholder(sessions, i18n)}
          detail={sessions === "not_shared" ? t("overview.headline.notSharedDetail") : t("overview.headline.energyDetail")}
        />
        <Headline
          testId="headline-revenue"
          label={t("overview.headline.revenue")}
          value={sessions === "copied" ? headlineRevenue(overview, i18n) : sessionsPlaceholder(sessions, i18n)}
          detail={sessions === "copied" ? revenueDetail(overview, i18n) : sessions === "not_shared" ? t("overview.headline.notSharedDetail") : t("overview.headline.revenueDetail")}
        />
        <Headline
          testId="headline-charge-points"
          label={t("overview.headline.chargePoints")}
          value={f.count(overview.chargePoints.total)}
          detail={t("overview.headline.chargePointsDetail", { available: f.count(overview.chargePoints.available), inError: f.count(overview.chargePoints.inError) })}
        />
        {overview.extraHeadlines.map((h) => (
          <Headline
            key={h.resource}
            testId={`headline-${h.resource}`}
            label={h.labels?.[i18n.locale] ?? h.label}
            value={h.state === "shown" ? f.count(h.value ?? 0) : h.state === "not_shared" ? t("overview.headline.notShared") : "—"}
            detail={h.state === "not_shared" ? t("overview.headline.notSharedThese") : (h.details?.[i18n.locale] ?? h.detail ?? "")}
          />
        ))}
      </div>

      <div className="grid gap-4 lg:grid-cols-2">
        <Tile title={t("overview.tile.energy")} testId="tile-energy">
          <SessionFigures overview={overview} i18n={i18n}>
            <DailyFigure overview={overview} field="kwh" color="#059669" i18n={i18n} />
          </SessionFigures>
        </Tile>
        <Tile title={t("overview.tile.sessions")} testId="tile-sessions">
          <SessionFigures overview={overview} i18n={i18n}>
            <DailyFigure overview={overview} field="sessions" color="#2563eb" i18n={i18n} />
          </SessionFigures>
        </Tile>
        <Tile title={t("overview.tile.states")} testId="tile-states">
          <StatesFigure overview={overview} i18n={i18n} />
        </Tile>
        <Tile title={t("overview.tile.revenue")} testId="tile-revenue">
          <SessionFigures overview={overview} i18n={i18n}>
            <Revenue overview={overview} i18n={i18n} />
          </SessionFigures>
        </Tile>
      </div>
    </div>
  );
}

/** Which days the page shows, and in which zone they are days ("(days in UTC)", "(dager i Oslo-tid)"). */
function rangeSentence({ range }: Overview, { t, f, zoneLabel }: DashboardI18n): string {
  const values = { days: range.days, from: f.day(range.from), to: f.day(range.to), zone: zoneLabel };
  switch (range.ends) {
    case "latest-session":
      return t("overview.range.latest", values);
    case "today":
      return t("overview.range.today", values);
    case "custom":
      return range.days === 1 ? t("overview.range.oneDay", values) : t("overview.range.custom", values);
  }
}

function freshnessText(label: string, fresh: ResourceFreshness, { t, f }: DashboardI18n): string {
  if (fresh.asOf === null) return t("overview.freshness.copying", { label });
  const failed = fresh.lastRun && fresh.lastRun.outcome !== "completed" && fresh.lastRun.outcome !== "skipped" && fresh.lastRun.startedAt > fresh.asOf;
  return t("overview.freshness.asOf", { label, when: f.dateTime(fresh.asOf) }) + (failed ? t("overview.freshness.failed") : "");
}

/** "As of": when each part of the copy was last complete; the figures are from then, whatever the service says now. */
function AsOf({ overview, i18n }: { overview: Overview; i18n: DashboardI18n }) {
  const { t } = i18n;
  const parts = [freshnessText(t("overview.freshness.chargePoints"), overview.freshness.chargePoints, i18n)];
  if (overview.sessions === "copying" || overview.sessions === "copied") parts.push(freshnessText(t("overview.freshness.sessions"), overview.freshness.charges, i18n));
  return (
    <p className="text-xs text-slate-500" data-testid="overview-as-of">
      {parts.join("; ")}. {t("overview.freshness.source")}
    </p>
  );
}

/** The headline's figure while there is none: "Not shared" when the operator did not share sessions, else a dash. */
function sessionsPlaceholder(sessions: SessionsState, { t }: DashboardI18n): string {
  return sessions === "not_shared" ? t("overview.headline.notShared") : "—";
}

function SessionFigures({ overview, i18n: { t, f }, children }: { overview: Overview; i18n: DashboardI18n; children: React.ReactNode }) {
  if (overview.sessions === "not_imported") return <TileNote>{t("overview.notImported")}</TileNote>;
  if (overview.sessions === "not_shared") return <TileNote>{t("overview.notShared")}</TileNote>;
  if (overview.sessions === "copying") return <TileNote>{t("overview.sessionsCopying", { count: f.count(overview.copied.charges) })}</TileNote>;
  if (overview.totals.sessions === 0) return <TileNote>{t("overview.noSessions")}</TileNote>;
  return <>{children}</>;
}

function DailyFigure({ overview, field, color, i18n }: { overview: Overview; field: "kwh" | "sessions"; color: string; i18n: DashboardI18n }) {
  const { t, f, zoneLabel } = i18n;
  const data = overview.days.map((d) => ({ day: d.day, value: d[field] }));
  const busiest = overview.days.reduce((best, d) => (d[field] > best[field] ? d : best), overview.days[0]!);
  const total = field === "kwh" ? f.kwh(overview.totals.kwh) : t.plural("overview.sessions", overview.totals.sessions);
  const summary = t("overview.summary", {
    total,
    days: overview.range.days,
    day: f.day(busiest.day),
    busiest: field === "kwh" ? f.kwh(busiest.kwh) : t.plural("overview.sessions", busiest.sessions),
  });
  return (
    <figure>
      <DailyBarChart
        data={data}
        unit={field === "kwh" ? "kWh" : t("overview.chart.sessionsUnit")}
        color={color}
        title={field === "kwh" ? t("overview.chart.energyTitle") : t("overview.chart.sessionsTitle")}
      />
      <figcaption className="mt-2 text-xs text-slate-600">{summary}</figcaption>
      <details className="mt-2 text-sm">
        <summary className="cursor-pointer text-brand-700">{t("overview.showTable")}</summary>
        {/* It scrolls, so it takes keyboard focus (WCAG 2.1.1), as app/components/data-table.tsx explains. */}
        <div className="mt-2 max-h-64 overflow-y-auto" role="region" aria-label={t(field === "kwh" ? "overview.tableLabel.kwh" : "overview.tableLabel.sessions")} tabIndex={0}>
          <table className="w-full text-left text-sm">
            <thead className="text-slate-600">
              <tr>
                <th className="py-1 font-medium">{t("overview.table.day", { zone: zoneLabel })}</th>
                <th className="py-1 text-right font-medium">{t(field === "kwh" ? "overview.table.energy" : "overview.table.sessions")}</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 tabular-nums">
              {overview.days.map((d) => (
                <tr key={d.day}>
                  <td className="py-1">{f.day(d.day)}</td>
                  <td className="py-1 text-right">{field === "kwh" ? f.kwh(d.kwh) : f.count(d.sessions)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

function StatesFigure({ overview, i18n: { t, f } }: { overview: Overview; i18n: DashboardI18n }) {
  if (overview.states.length === 0) return <TileNote>{t(overview.config.siteIds.length > 0 ? "overview.noChargePointsSites" : "overview.noChargePoints")}</TileNote>;
  const data = overview.states.map((s) => ({ ...chargePointStateStyle(s.state, t), count: s.count }));
  return (
    <figure>
      <StatesBarChart data={data.map(({ label, count, color }) => ({ label, count, color }))} title={t("overview.tile.states")} unit={t("overview.chart.chargePointsUnit")} />
      <figcaption className="sr-only">{t("overview.statesCaption", { list: data.map((s) => `${s.label} ${f.count(s.count)}`).join(", ") })}</figcaption>
      <ul className="mt-3 grid grid-cols-1 gap-x-4 gap-y-1 text-sm sm:grid-cols-2" data-testid="state-list">
        {data.map((s) => (
          <li key={s.label} className="flex items-center justify-between gap-2">
            <span className="flex min-w-0 items-center gap-2">
              {/* The bar's own colour, so each dot matches its bar (states of one tone differ in the chart). */}
              <span className="h-2.5 w-2.5 shrink-0 rounded-full" style={{ backgroundColor: s.color }} aria-hidden="true" />
              <span className="truncate">{s.label}</span>
            </span>
            <span className="tabular-nums text-slate-700">{f.count(s.count)}</span>
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
function headlineRevenue(overview: Overview, { f }: DashboardI18n): string {
  const first = overview.revenue[0];
  if (!first) return "—";
  return f.money(first.amount, first.currency, first.decimals);
}

/** What the headline's amount is: which currency, and what else was taken. */
function revenueDetail(overview: Overview, { t }: DashboardI18n): string {
  const reporting = overview.config.currency;
  const others = overview.revenue.length - 1;
  const andOthers = others > 0 ? t.plural("overview.revenue.others", others) : "";
  if (reporting && overview.revenue.length > 0 && overview.revenue[0]!.currency !== reporting) {
    return [t("overview.revenue.noneInReporting", { currency: reporting }), andOthers].filter(Boolean).join("; ");
  }
  return andOthers || t("overview.headline.revenueDetail");
}

function Revenue({ overview, i18n: { t, f } }: { overview: Overview; i18n: DashboardI18n }) {
  const reporting = overview.config.currency;
  const rows: CurrencyTotal[] = [...overview.revenue];
  const others = rows.filter((r) => r.currency !== reporting).map((r) => r.currency ?? t("overview.revenue.noCurrency"));
  return (
    <div className="space-y-3">
      <ul className="divide-y divide-slate-100" data-testid="revenue-list">
        {reporting && !rows.some((r) => r.currency === reporting) ? (
          <li className="flex justify-between gap-2 py-2 text-sm">
            <span>{t("overview.revenue.reporting", { currency: reporting })}</span>
            <span className="text-slate-500">{t("overview.revenue.noneRecorded", { currency: reporting })}</span>
          </li>
        ) : null}
        {rows.map((r) => (
          <li key={r.currency ?? "none"} className="flex flex-wrap justify-between gap-x-2 py-2" data-currency={r.currency ?? ""}>
            <span className="text-sm text-slate-600">
              {r.currency ?? t("overview.revenue.noCurrency")}
              {r.currency === reporting ? t("overview.revenue.isReporting") : ""} · {t.plural("overview.sessions", r.sessions)}
            </span>
            <span className="font-semibold tabular-nums">{f.money(r.amount, r.currency, r.decimals)}</span>
          </li>
        ))}
      </ul>
      <p className="text-xs text-slate-600" data-testid="revenue-note">
        {reporting
          ? others.length > 0
            ? t("overview.revenue.someOther", { others: others.join(", "), currency: reporting })
            : t("overview.revenue.allReporting", { currency: reporting })
          : t("overview.revenue.noReporting")}{" "}
        {t("overview.revenue.sum")}
      </p>
    </div>
  );
}

/** Before the first pass over the data has ended: what is happening, how far it got, and where else to go. */
function CopyUnderWay({ overview, updating, i18n: { t, f } }: { overview: Overview; updating: boolean; i18n: DashboardI18n }) {
  const { chargePoints, charges } = overview.freshness;
  const started = [chargePoints.passStartedAt, charges.passStartedAt].filter((d): d is Date => d !== null).sort((a, b) => a.getTime() - b.getTime())[0];
  return (
    <div className="space-y-4 rounded-lg border border-slate-200 bg-white p-6" data-testid="overview-copying" data-updating={updating ? "yes" : "no"}>
      <h2 className="text-lg font-semibold">{t(updating ? "overview.copying.title" : "overview.copying.stoppedTitle")}</h2>
      <p className="text-slate-700">{t(updating ? "overview.copying.text" : "overview.copying.stoppedText")}</p>
      <p className="text-sm text-slate-600" data-testid="copy-progress">
        {[
          started ? t("overview.copying.since", { when: f.dateTime(started) }) : t("overview.copying.notStarted"),
          overview.sessions === "copying"
            ? t("overview.copying.progressWithSessions", { chargePoints: f.count(overview.copied.chargePoints), sessions: f.count(overview.copied.charges) })
            : t("overview.copying.progress", { chargePoints: f.count(overview.copied.chargePoints) }),
          overview.sessions === "not_imported" ? t("overview.copying.notImporting") : overview.sessions === "not_shared" ? t("overview.copying.notShared") : "",
        ]
          .filter(Boolean)
          .join(" ")}
      </p>
      {updating ? <RefreshWhileCopying /> : null}
      <nav aria-label={t("overview.copying.meanwhileLabel")}>
        <p className="text-sm text-slate-600">{t("overview.copying.meanwhile")}</p>
        <ul className="mt-1 flex flex-wrap gap-x-4 gap-y-1 text-sm">
          {DASHBOARD_SECTIONS.map((s) => (
            <li key={s.href}>
              <Link href={s.href} className="text-brand-700 underline">
                {sectionLabel(s, t)}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
    </div>
  );
}
