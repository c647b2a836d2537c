// After "Stay as ...": the session is unchanged; show where to go from here.
import type { Metadata } from "next";
import Link from "next/link";
import { currentSignIn } from "@/lib/auth/pending-sign-in";

export const metadata: Metadata = { title: "Signed in as before" };

export const dynamic = "force-dynamic";

export default async function StayedPage() {
  const current = await currentSignIn();
  const home = current?.kind === "staff" ? "/admin" : "/dashboard";
  return (
    <div className="max-w-xl rounded-lg border border-slate-200 bg-white p-6">
      <h1 className="text-xl font-semibold">You stayed signed in as before</h1>
      <p className="mt-2 text-slate-600">
        The connection that was just made is stored, but this browser is not signed in to it. If it was yours, sign in to it by connecting the app again
        from the operator portal later.
      </p>
      <Link href={home} className="mt-4 inline-block text-brand-700 underline" data-testid="continue-home">
        {current?.kind === "staff" ? "Back to the staff console" : "Back to the dashboard"}
      </Link>
    </div>
  );
}
