// "Older →" and "← Newest" under a list read newest first in keyset pages (the console's audit log
// and webhook log): the next page starts after the last row shown, so rows added meanwhile never
// shift a page, and there is no "page 7 of 40" to count.
import Link from "next/link";

export function KeysetPages({ olderHref, newestHref, testId }: { olderHref: string | null; newestHref: string | null; testId: string }) {
  return (
    <>
      {olderHref ? (
        <nav aria-label="Pagination" className="flex justify-end text-sm">
          <Link href={olderHref} className="text-brand-700 hover:underline" rel="next" data-testid={`${testId}-older`}>
            Older →
          </Link>
        </nav>
      ) : null}
      {newestHref ? (
        <p className="text-sm">
          <Link href={newestHref} className="text-brand-700 hover:underline">
            ← Newest
          </Link>
        </p>
      ) : null}
    </>
  );
}
