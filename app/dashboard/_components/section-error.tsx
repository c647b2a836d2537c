"use client";
// What a section shows when its page failed to render (an error.tsx boundary): a plain sentence and
// a retry that re-renders the page on the server (router.refresh) and resets the boundary. The
// error's message is not shown: it may say more about the server than an operator should see; the
// digest ties it to the server's log line.
import { useRouter } from "next/navigation";
import { startTransition } from "react";

export function SectionError({ what, error, reset }: { what: string; error: Error & { digest?: string }; reset: () => void }) {
  const router = useRouter();
  return (
    <div className="space-y-3 rounded-lg border border-red-200 bg-red-50 p-5" role="alert">
      <h2 className="font-semibold text-red-900">The {what} could not be shown</h2>
      <p className="text-sm text-red-900">Something went wrong while reading them. Try again; if it keeps happening, the app&apos;s logs say why.</p>
      {error.digest ? <p className="font-mono text-xs text-red-800">Reference: {error.digest}</p> : null}
      <button
        type="button"
        className="rounded-md bg-red-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-red-800"
        onClick={() =>
          startTransition(() => {
            router.refresh();
            reset();
          })
        }
      >
        Try again
      </button>
    </div>
  );
}
