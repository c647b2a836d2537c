// /oauth/continue: an install was just completed in a browser that is signed in as someone else.
// The install is stored; this page asks which account to continue with (lib/auth/pending-sign-in.ts).
import type { Metadata } from "next";
import Link from "next/link";
import { currentSignIn, findPendingSignIn, type CurrentSignIn } from "@/lib/auth/pending-sign-in";
import { choosePendingSignInAction } from "./actions";

export const metadata: Metadata = { title: "Choose an account" };

export const dynamic = "force-dynamic";

function describe(current: CurrentSignIn): string {
  return current.kind === "staff" ? `staff member ${current.email}` : `operator ${current.operatorId}`;
}

export default async function ContinuePage() {
  const [pending, current] = await Promise.all([findPendingSignIn(), currentSignIn()]);
  if (!pending) {
    return (
      <div className="max-w-xl rounded-lg border border-slate-200 bg-white p-6">
        <h1 className="text-xl font-semibold">Nothing to continue</h1>
        <p className="mt-2 text-slate-600">
          There is no connection waiting for a choice in this browser: it was already made, or it expired after ten minutes.
        </p>
        <Link href="/dashboard" className="mt-4 inline-block text-brand-700 underline">
          Go to the dashboard
        </Link>
      </div>
    );
  }
  return (
    <div className="max-w-xl rounded-lg border border-slate-200 bg-white p-6">
      <h1 className="text-xl font-semibold">Which account do you want to use?</h1>
      <p className="mt-2 text-slate-600" data-testid="current-sign-in">
        {current ? <>You are signed in as {describe(current)}.</> : <>You are not signed in.</>}
      </p>
      <p className="mt-2 text-slate-600">
        The app was just connected for operator <span data-testid="pending-operator">{pending.operatorId}</span>. If you did not
        just approve that connection in the operator portal yourself, someone may have sent you their link: stay as you are.
      </p>
      <form action={choosePendingSignInAction} className="mt-5 flex flex-wrap gap-3">
        <button
          type="submit"
          name="choice"
          value="switch"
          className="rounded-md bg-brand-700 px-4 py-2 font-medium text-white hover:bg-brand-800"
        >
          Continue as operator {pending.operatorId}
        </button>
        <button
          type="submit"
          name="choice"
          value="stay"
          className="rounded-md border border-slate-300 bg-white px-4 py-2 text-slate-700 hover:bg-slate-50"
        >
          {current ? `Stay as ${describe(current)}` : "Do not sign in"}
        </button>
      </form>
    </div>
  );
}
