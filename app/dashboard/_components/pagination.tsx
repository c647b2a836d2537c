// First / previous / next / last links and page-size links for a server-paginated list; plain links, so they work without JavaScript.
import Link from "next/link";
import { formatterFor, type Formatter } from "@/lib/i18n/format";

const ENGLISH = formatterFor("en", "UTC");

export function Pagination({ page, perPage, total, hrefFor, f = ENGLISH }: { page: number; perPage: number; total: number; hrefFor: (page: number) => string; f?: Formatter }) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (pages <= 1 && page === 0) return null;
  const last = pages - 1;
  // First and last beside previous and next: across a hundred pages, the end is one step away, not
  // a hundred. A step that leads nowhere (already on the first or last page) is left out.
  const link = "whitespace-nowrap text-brand-700 hover:underline";
  return (
    <nav className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2 text-sm" aria-label="Pagination">
      <span className="flex gap-4">
        {page > 0 ? (
          <>
            <Link href={hrefFor(0)} className={link} data-testid="page-first">
              « First
            </Link>
            <Link href={hrefFor(Math.min(page - 1, last))} className={link} rel="prev">
              ← Previous
            </Link>
          </>
        ) : null}
      </span>
      <span className="text-slate-600">
        Page {f.count(page + 1)} of {f.count(pages)}
      </span>
      <span className="flex gap-4">
        {page < last ? (
          <>
            <Link href={hrefFor(page + 1)} className={link} rel="next">
              Next →
            </Link>
            <Link href={hrefFor(last)} className={link} data-testid="page-last">
              Last »
            </Link>
          </>
        ) : null}
      </span>
    </nav>
  );
}

/** "1–25 of 36", or the empty words. */
/** "1–25 of 240", with the numbers in the reader's format (`f`: the operator's on the dashboard). */
export function rangeText(page: number, perPage: number, shown: number, total: number, f: Formatter = ENGLISH): string {
  if (shown === 0) return `0 of ${f.count(total)}`;
  const first = page * perPage + 1;
  return `${f.count(first)}–${f.count(first + shown - 1)} of ${f.count(total)}`;
}

/** A query string without the keys left at their defaults, so links stay short and readable. */
export function queryString(values: Record<string, string | number | undefined>, defaults: Record<string, string | number>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === "" || defaults[key] === value) continue;
    params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** "Per page: 10 25 50 100", each a link that starts again at the first page with that size. */
export function PageSizeLinks({ choices, current, hrefFor }: { choices: readonly number[]; current: number; hrefFor: (perPage: number) => string }) {
  return (
    <nav className="flex items-center gap-2 text-sm" aria-label="Page size">
      <span className="text-slate-600">Per page:</span>
      {choices.map((n) => (
        <Link
          key={n}
          href={hrefFor(n)}
          className={n === current ? "font-semibold text-slate-900" : "text-brand-700 hover:underline"}
          aria-current={n === current ? "true" : undefined}
        >
          {n}
        </Link>
      ))}
    </nav>
  );
}
