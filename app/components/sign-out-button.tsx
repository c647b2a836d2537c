"use client";
// Signs the person out through next-auth (a POST with its CSRF token); next-auth clears the cookie
// and events.signOut (lib/auth/options.ts) revokes the session's row, so copies of it stop working too.
// Used by the staff console and by the operator's dashboard.
import { signOut } from "next-auth/react";
import { useState, useSyncExternalStore } from "react";

// Set once a sign-out starts in this document: a page that redraws itself (router.refresh, as the
// dashboard does while a first copy runs) must not redraw under it, or the redraw can land after the
// session is cleared and leave the person on the page, signed out, instead of at `callbackUrl`.
let signingOut = false;

/** Whether this document is signing out (the page's own refreshes wait for the navigation instead). */
export function isSigningOut(): boolean {
  return signingOut;
}

// The button only works once the page has hydrated (next-auth signs out from the browser); until then
// it is disabled, so a click that lands before hydration on a slow device is not silently lost. True
// in the browser, false in the server's render and during hydration: React's documented way to tell
// the two apart without an effect.
const noSubscription = () => () => {};
function useHydrated(): boolean {
  return useSyncExternalStore(noSubscription, () => true, () => false);
}

/** `label`, `pendingLabel`: the words in the reader's language (the dashboard's catalogue); English by default. */
export function SignOutButton({ callbackUrl, label = "Sign out", pendingLabel = "Signing out…" }: { callbackUrl: string; label?: string; pendingLabel?: string }) {
  const [pending, setPending] = useState(false);
  const hydrated = useHydrated();
  return (
    <button
      type="button"
      disabled={pending || !hydrated}
      onClick={() => {
        setPending(true);
        signingOut = true;
        void signOut({ callbackUrl });
      }}
      className="rounded-md border border-slate-300 bg-white px-3 py-1 text-sm text-slate-700 hover:bg-slate-50 disabled:opacity-60"
    >
      {pending ? pendingLabel : label}
    </button>
  );
}
