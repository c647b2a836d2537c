// Previous / next links and page-size links for a server-paginated list; plain links, so they work without JavaScript.
import Link from "next/link";
import { formatCount } from "../format";

export function Pagination({ page, perPage, total, hrefFor }: { page: number; perPage: number; total: number; hrefFor: (page: number) => string }) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (pages <= 1 && page === 0) return null;
  return (
    <nav className="flex items-center justify-between gap-3 text-sm" aria-label="Pagination">
      {page > 0 ? (
        <Link href={hrefFor(Math.min(page - 1, pages - 1))} className="text-brand-700 hover:underline" rel="prev">
          ← Previous
        </Link>
      ) : (
        <span />
      )}
      <span className="text-slate-500">
        Page {formatCount(page + 1)} of {formatCount(pages)}
      </span>
      {page + 1 < pages ? (
        <Link href={hrefFor(page + 1)} className="text-brand-700 hover:underline" rel="next">
          Next →
        </Link>
      ) : (
        <span />
      )}
    </nav>
  );
}

/** "1–25 of 36", or the empty words. */
export function rangeText(page: number, perPage: number, shown: number, total: number): string {
  if (shown === 0) return `0 of ${formatCount(total)}`;
  const first = page * perPage + 1;
  return `${formatCount(first)}–${formatCount(first + shown - 1)} of ${formatCount(total)}`;
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
      <span className="text-slate-500">Per page:</span>
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
