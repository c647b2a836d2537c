"use client";
// When the Overview cannot be read (its database is unreachable, say): what happened, in words, and
// a retry. The error's message is not shown: in production Next.js replaces a server error's message
// with a digest anyway, and a message could name internals; the digest matches the server's log line.
export default function OverviewError({ error, retry }: { error: unknown; retry: () => void }) {
  const digest = error instanceof Error && "digest" in error && typeof error.digest === "string" ? error.digest : undefined;
  return (
    <div className="rounded-lg border border-amber-300 bg-amber-50 p-6" role="alert" data-testid="overview-error">
      <h2 className="font-semibold text-amber-900">The overview could not be shown</h2>
      <p className="mt-2 text-sm text-amber-900">The app could not read its copy of your data just now. This is usually brief; try again in a moment.</p>
      {digest ? <p className="mt-1 text-xs text-amber-800">Reference: {digest}</p> : null}
      <button
        type="button"
        className="mt-4 rounded-md bg-amber-900 px-4 py-2 text-sm font-medium text-white hover:bg-amber-800"
        // retry() fetches the page from the server again and renders it in place of this message
        // (reset() alone would re-render what the browser already has: the same failure).
        onClick={() => retry()}
      >
        Try again
      </button>
    </div>
  );
}
