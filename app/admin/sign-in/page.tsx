// /admin/sign-in: the staff console's sign-in. The form posts through next-auth's "staff"
// Credentials provider (lib/auth/options.ts); operators never sign in here (they come from the portal).
import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentStaff } from "@/lib/auth/staff";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Staff sign-in" };

export const dynamic = "force-dynamic";

export default async function StaffSignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  if (await currentStaff()) redirect("/admin");
  // next-auth sends its own failures here with `?error=` (pages.error); the form says so.
  const { error } = await searchParams;
  return (
    <div className="mx-auto max-w-sm rounded-lg border border-slate-200 bg-white p-6">
      <h1 className="text-xl font-semibold">Staff console</h1>
      <p className="mt-1 text-sm text-slate-600">For the app&apos;s own staff. Operators open the app from the operator portal.</p>
      <SignInForm initialError={typeof error === "string" ? error : null} />
    </div>
  );
}
