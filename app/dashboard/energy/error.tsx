"use client";
// A failed read of the Energy page (the database away, an unexpected error): say so, offer a retry.
// The error's message is not shown: it may name internals; the digest ties it to the server's log.
import { useRouter } from "next/navigation";
import { startTransition } from "react";

export default function EnergyError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  const router = useRouter();
  return (
    <div className="rounded-md border border-red-200 bg-red-50 p-4 text-sm text-red-900" role="alert">
      <h1 className="font-semibold">The energy history could not be shown</h1>
      <p className="mt-1">Something went wrong while reading it. Your data is safe; try again.</p>
      {error.digest ? <p className="mt-1 text-xs text-red-700">Reference: {error.digest}</p> : null}
      <button
        type="button"
        className="mt-3 rounded-md bg-red-700 px-3 py-1.5 font-medium text-white hover:bg-red-800"
        // Re-render the server component and reset the boundary together (Next.js's documented retry).
        onClick={() => startTransition(() => { router.refresh(); reset(); })}
      >
        Try again
      </button>
    </div>
  );
}
