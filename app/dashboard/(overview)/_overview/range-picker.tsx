// The Overview's range: links for 7, 30 and 90 days, and a small form for dates. Both put the range
// in the URL (`?days=30`, `?from=2025-02-01&to=2025-02-28`), so a view can be bookmarked and shared,
// and both work without JavaScript (the form is a plain GET).
import Link from "next/link";
import { RANGE_PRESETS, type OverviewRange, type RangeChoice } from "@/lib/dashboard/overview";
import type { Translator } from "@/lib/i18n/messages";

export function RangePicker({ choice, range, t }: { choice: RangeChoice; range: OverviewRange; t: Translator }) {
  const currentDays = choice.kind === "custom" ? null : choice.days;
  return (
    <div className="flex flex-wrap items-end gap-x-4 gap-y-2">
      <nav aria-label={t("overview.picker.presets")} className="flex gap-1 text-sm">
        {RANGE_PRESETS.map((days) => (
          <Link
            key={days}
            href={`/dashboard?days=${days}`}
            aria-current={days === currentDays ? "true" : undefined}
            className={
              days === currentDays
                ? "rounded-md bg-slate-900 px-3 py-1.5 font-medium text-white"
                : "rounded-md border border-slate-300 bg-white px-3 py-1.5 text-slate-700 hover:bg-slate-100"
            }
          >
            {t("overview.picker.days", { days })}
          </Link>
        ))}
      </nav>
      <form method="get" action="/dashboard" className="flex flex-wrap items-end gap-2 text-sm" aria-label={t("overview.picker.custom")}>
        <label className="flex flex-col text-xs text-slate-600">
          {t("overview.picker.from")}
          <input type="date" name="from" required defaultValue={range.from} className="rounded-md border border-slate-300 px-2 py-1 text-sm text-slate-900" />
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          {t("overview.picker.to")}
          <input type="date" name="to" required defaultValue={range.to} className="rounded-md border border-slate-300 px-2 py-1 text-sm text-slate-900" />
        </label>
        <button type="submit" className="rounded-md border border-slate-300 bg-white px-3 py-1.5 font-medium text-slate-700 hover:bg-slate-100">
          {t("overview.picker.show")}
        </button>
      </form>
    </div>
  );
}
