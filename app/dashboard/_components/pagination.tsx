// First / previous / next / last links and page-size links for a server-paginated list; plain links, so they work without JavaScript.
// Used by the dashboard (in the operator's language: `words` from lib/i18n/request.ts) and by the
// staff console (English and UTC, the default: docs/spec-gaps.md A154).
import Link from "next/link";
import { formatterFor } from "@/lib/i18n/format";
import { translator, type Words } from "@/lib/i18n/messages";

const ENGLISH: Words = { t: translator("en"), f: formatterFor("en", "UTC") };

export function Pagination({ page, perPage, total, hrefFor, words = ENGLISH }: { page: number; perPage: number; total: number; hrefFor: (page: number) => string; words?: Words }) {
  const { t, f } = words;
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (pages <= 1 && page === 0) return null;
  const last = pages - 1;
  // First and last beside previous and next: across a hundred pages, the end is one step away, not
  // a hundred. A step that leads nowhere (already on the first or last page) is left out.
  const link = "whitespace-nowrap text-brand-700 hover:underline";
  return (
    <nav className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2 text-sm" aria-label={t("pagination.label")}>
      <span className="flex gap-4">
        {page > 0 ? (
          <>
            <Link href={hrefFor(0)} className={link} data-testid="page-first">
              {t("pagination.first")}
            </Link>
            <Link href={hrefFor(Math.min(page - 1, last))} className={link} rel="prev">
              {t("pagination.previous")}
            </Link>
          </>
        ) : null}
      </span>
      <span className="text-slate-600">
        {t("pagination.page", { page: f.count(page + 1), pages: f.count(pages) })}
      </span>
      <span className="flex gap-4">
        {page < last ? (
          <>
            <Link href={hrefFor(page + 1)} className={link} rel="next">
              {t("pagination.next")}
            </Link>
            <Link href={hrefFor(last)} className={link} data-testid="page-last">
              {t("pagination.last")}
            </Link>
          </>
        ) : null}
      </span>
    </nav>
  );
}

/** "1–25 of 36", or the empty words, in the reader's language and number format. */
export function rangeText(page: number, perPage: number, shown: number, total: number, { t, f }: Words = ENGLISH): string {
  if (shown === 0) return t("pagination.none", { total: f.count(total) });
  const first = page * perPage + 1;
  return t("pagination.range", { first: f.count(first), last: f.count(first + shown - 1), total: f.count(total) });
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
export function PageSizeLinks({ choices, current, hrefFor, words = ENGLISH }: { choices: readonly number[]; current: number; hrefFor: (perPage: number) => string; words?: Words }) {
  const { t } = words;
  return (
    <nav className="flex items-center gap-2 text-sm" aria-label={t("pagination.sizeLabel")}>
      <span className="text-slate-600">{t("pagination.perPage")}</span>
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
