// Any address the app has no page for (and every notFound() without a not-found page of its own):
// the app's header stays around it (the root layout), and it offers the ways on. The status is 404.
import type { Metadata } from "next";
import Link from "next/link";

export const metadata: Metadata = { title: "Page not found" };

export default function NotFound() {
  return (
    <section className="max-w-2xl space-y-3 rounded-lg border border-slate-200 bg-white p-4 sm:p-6" data-testid="not-found">
      <h1 className="text-xl font-semibold">This page does not exist</h1>
      <p className="text-slate-600">The address may be mistyped, or the page may have moved.</p>
      <ul className="flex flex-wrap gap-x-5 gap-y-2 text-sm">
        <li>
          <Link href="/" className="text-brand-700 underline">
            Home
          </Link>
        </li>
        <li>
          <Link href="/dashboard" className="text-brand-700 underline">
            Your dashboard
          </Link>
        </li>
      </ul>
    </section>
  );
}
