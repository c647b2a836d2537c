"use client";
// Energy per day as a bar chart (Recharts: a client component, fed by the server page with plain
// numbers). ResponsiveContainer fits the chart to its box, so it never widens the page on a phone.
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { EnergyDay } from "@/lib/dashboard/energy";
import { useI18n } from "../_components/i18n";
import { energyTranslator } from "./i18n";

/** The days are UTC days (docs/spec-gaps.md A153); the numbers in the operator's format, through the formatter module. */
export function EnergyChart({ days }: { days: EnergyDay[] }) {
  const { f, locale } = useI18n();
  const t = energyTranslator(locale);
  const kwh = { format: (value: number) => f.number(value) };
  const data = days.map((d) => ({ ...d, label: f.shortDay(d.day) }));
  return (
    <div className="h-64 w-full min-w-0">
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="var(--chart-grid)" />
          <XAxis dataKey="label" tick={{ fontSize: 12, fill: "var(--chart-tick)" }} interval="preserveStartEnd" minTickGap={16} />
          <YAxis tick={{ fontSize: 12, fill: "var(--chart-tick)" }} width={44} tickFormatter={(value: number) => kwh.format(value)} />
          <Tooltip
            formatter={(value) => [t("energy.chart.value", { value: kwh.format(Number(value)) }), t("energy.chart.series")]}
            labelFormatter={(label, payload) => {
              const sessions = payload?.[0]?.payload?.sessions as number | undefined;
              return sessions === undefined ? String(label) : t.plural("energy.chart.sessions", sessions, { label: String(label) });
            }}
          />
          <Bar dataKey="energyKwh" name={t("energy.chart.series")} fill="#4f46e5" radius={[3, 3, 0, 0]} maxBarSize={56} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
