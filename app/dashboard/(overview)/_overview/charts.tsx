"use client";
// The Overview's charts (Recharts). Client components because Recharts measures and draws in the
// browser; the server component hands them plain, serialisable arrays (no Dates, no Decimals), so
// nothing but the figures crosses to the client. Each chart sits in a <figure> whose caption says
// what it shows in a sentence, and the page offers the same figures as a table: the chart is never
// the only way to read them (screen readers, and anyone who wants the exact numbers).
import { Bar, BarChart, CartesianGrid, Cell, Tooltip, XAxis, YAxis } from "recharts";
import { useI18n } from "../../_components/i18n";

export type DailyPoint = { day: string; value: number };
export type StatePoint = { label: string; count: number; color: string };

/**
 * One bar per day (the operator's days: lib/dashboard/overview.ts groups them in their zone). `unit`
 * is appended in the tooltip ("kWh", "sessions"). Axis and tooltip format through the formatter
 * module in the operator's language (useI18n), with formatters built once, not on every tick.
 */
export function DailyBarChart({ data, unit, color, title }: { data: DailyPoint[]; unit: string; color: string; title: string }) {
  const { f } = useI18n();
  const formatDay = (day: string) => f.shortDay(day);
  const number = { format: (value: number) => f.number(value) };
  return (
    <BarChart responsive data={data} title={title} style={{ width: "100%", height: 220 }} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
      <CartesianGrid vertical={false} stroke="var(--chart-grid)" />
      <XAxis dataKey="day" tickFormatter={formatDay} minTickGap={24} tick={{ fontSize: 12, fill: "var(--chart-tick)" }} tickLine={false} axisLine={{ stroke: "var(--chart-axis)" }} />
      <YAxis width={44} tick={{ fontSize: 12, fill: "var(--chart-tick)" }} tickLine={false} axisLine={false} tickFormatter={(v: number) => number.format(v)} allowDecimals={false} />
      <Tooltip
        cursor={{ fill: "var(--chart-cursor)" }}
        labelFormatter={(day) => formatDay(String(day))}
        formatter={(value) => [`${number.format(Number(value))} ${unit}`, ""]}
        separator=""
      />
      <Bar dataKey="value" fill={color} radius={[3, 3, 0, 0]} isAnimationActive={false} />
    </BarChart>
  );
}

/** Charge points per state, one horizontal bar each, in the state's colour. `unit`: "charge points", in the operator's words. */
export function StatesBarChart({ data, title, unit }: { data: StatePoint[]; title: string; unit: string }) {
  const { f } = useI18n();
  const height = Math.max(120, data.length * 32 + 24);
  return (
    <BarChart responsive layout="vertical" data={data} title={title} style={{ width: "100%", height }} margin={{ top: 0, right: 16, bottom: 0, left: 0 }}>
      <XAxis type="number" allowDecimals={false} tick={{ fontSize: 12, fill: "var(--chart-tick)" }} tickLine={false} axisLine={{ stroke: "var(--chart-axis)" }} />
      <YAxis type="category" dataKey="label" width={116} tick={{ fontSize: 12, fill: "var(--chart-label)" }} tickLine={false} axisLine={false} />
      <Tooltip cursor={{ fill: "var(--chart-cursor)" }} formatter={(value) => [`${f.count(Number(value))} ${unit}`, ""]} separator="" />
      <Bar dataKey="count" radius={[0, 3, 3, 0]} isAnimationActive={false}>
        {data.map((point) => (
          <Cell key={point.label} fill={point.color} />
        ))}
      </Bar>
    </BarChart>
  );
}
