"use client";
// The sign-in form. next-auth 4's `signIn` (next-auth/react) fetches the CSRF token and posts the
// credentials to /api/auth/callback/staff; with `redirect: false` it tells us how that went instead
// of leaving the page, so a failure can be shown in place.
import { signIn } from "next-auth/react";
import { useRouter } from "next/navigation";
import { useRef, useState, useTransition } from "react";
import { describeSignInRefusal, parseSignInRefusal } from "@/lib/auth/sign-in-refusal";

// One message for every refusal: it must not tell an unknown email from a wrong password.
const REFUSED = "That email and password do not match a staff account.";
const UNAVAILABLE = "Signing in did not work just now. Try again in a moment.";

/** What to say for next-auth's `error` value: a refusal before the check (wait N s), or a plain refusal. */
function messageFor(error: string): string {
  const refusal = parseSignInRefusal(error);
  return refusal ? describeSignInRefusal(refusal) : REFUSED;
}

export function SignInForm({ initialError }: { initialError: string | null }) {
  const router = useRouter();
  const password = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<string | null>(initialError ? messageFor(initialError) : null);
  const [pending, startTransition] = useTransition();

  function submit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    startTransition(async () => {
      let message = UNAVAILABLE; // unless the app answered with a refusal it explains
      try {
        const result = await signIn("staff", {
          redirect: false,
          callbackUrl: "/admin",
          email: String(form.get("email") ?? ""),
          password: String(form.get("password") ?? ""),
        });
        if (result?.ok && !result.error) {
          router.replace("/admin");
          router.refresh();
          return;
        }
        // "CredentialsSignin": the email and password do not match. "limited.N" / "busy.N": turned
        // away before the check (lib/auth/sign-in-refusal.ts); the message says how long to wait.
        if (result?.error === "CredentialsSignin" || parseSignInRefusal(result?.error)) message = messageFor(result!.error!);
      } catch {
        // the app did not answer
      }
      setError(message);
      if (password.current) {
        password.current.value = "";
        password.current.focus();
      }
    });
  }

  return (
    <form onSubmit={submit} className="mt-5 space-y-4">
      <label className="block text-sm">
        <span className="font-medium text-slate-700">Email</span>
        <input
          name="email"
          type="email"
          autoComplete="username"
          required
          className="mt-1 block w-full rounded-md border border-slate-300 px-3 py-2 focus:border-brand-600 focus:outline-none"
        />
      </label>
      <label className="block text-sm">
        <span className="font-medium text-slate-700">Password</span>
        <input
          ref={password}
          name="password"
          type="password"
          autoComplete="current-password"
          required
          className="mt-1 block w-full rounded-md border border-slate-300 px-3 py-2 focus:border-brand-600 focus:outline-none"
        />
      </label>
      {error ? (
        <p role="alert" data-testid="sign-in-error" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      ) : null}
      <button
        type="submit"
        disabled={pending}
        className="w-full rounded-md bg-brand-700 px-4 py-2 font-medium text-white hover:bg-brand-800 disabled:opacity-60"
      >
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
