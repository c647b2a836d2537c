// The console's "last purge" line: when each table's history was last purged, and how many rows went
// (lib/retention/purge.ts, docs/data-retention.md). A table whose last run says "more" did not finish
// within its time limit; the next hourly run goes on, and one that keeps saying it is falling behind.
import { fetchLastPurges } from "@/lib/retention/purge";
import { formatTime } from "./format";

export async function RetentionLine() {
  const purges = await fetchLastPurges();
  return (
    <p className="text-xs break-words text-slate-500" data-testid="retention-line">
      Last purge of old history:{" "}
      {purges.length === 0
        ? "none yet (the retention job runs hourly)."
        : purges.map((purge, index) => (
            <span key={purge.table} data-purge-table={purge.table} data-purge-outcome={purge.outcome} data-purge-deleted={purge.deletedRows}>
              {index > 0 ? " · " : ""}
              <code className="font-mono">{purge.table}</code> {formatTime(purge.finishedAt)}, {purge.deletedRows.toLocaleString("en-US")} rows in{" "}
              {(purge.durationMs / 1000).toFixed(1)} s{purge.outcome === "more" ? " (not finished: the next run goes on)" : ""}
            </span>
          ))}
    </p>
  );
}
