// "As of" line: how fresh the local copy a page shows is (lib/dashboard/freshness.ts).
import { formatDateTime } from "../format";

export function AsOf({ asOf, testId = "as-of" }: { asOf: Date; testId?: string }) {
  return (
    <p className="text-xs text-slate-500" data-testid={testId}>
      From the app&apos;s copy of your data, as of <time dateTime={asOf.toISOString()}>{formatDateTime(asOf)}</time>
    </p>
  );
}
