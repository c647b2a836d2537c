"use client";
// Shown when a page fails for a reason of the app's own (e.g. its database is unreachable). It
// never shows the error's message, which could hold internal details.
export default function ErrorPage({ reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="max-w-2xl rounded-lg border border-amber-300 bg-amber-50 p-6" role="alert">
      <h1 className="text-xl font-semibold">The app is having trouble</h1>
      <p className="mt-2 text-slate-700">This page could not be loaded just now. Nothing you did caused it, and nothing was lost.</p>
      <button type="button" onClick={reset} className="mt-4 rounded-md bg-brand-700 px-4 py-2 font-medium text-white hover:bg-brand-800">
        Try again
      </button>
    </div>
  );
}
