import type { Metadata } from "next";
import Link from "next/link";
import { connection } from "next/server";
import { PRODUCT } from "@/lib/config/product";
import "./globals.css";

export const metadata: Metadata = {
  // The product's names live in lib/config/product.ts (`npm run rename` sets them). Each page names
  // itself (`export const metadata = { title: "Sessions" }`): a tab, a bookmark and a screen
  // reader's first words then say which page it is, not only which app.
  title: { default: PRODUCT.displayName, template: `%s · ${PRODUCT.displayName}` },
  description: "A partner app for charging-network operators, built on the partner integration service.",
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  // Every page is rendered per request, the built-in not-found page too: Next.js puts the request's
  // CSP nonce (proxy.ts) on its scripts only while rendering, so a page prerendered at build time
  // would carry scripts without one, and the browser would refuse to run them.
  await connection();
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased">
        <header className="border-b border-slate-200 bg-white">
          <div className="mx-auto flex max-w-5xl items-center justify-between gap-3 px-4 py-3 sm:px-6 sm:py-4">
            <Link href="/" className="text-lg font-semibold tracking-tight">
              <span className="text-brand-700">{PRODUCT.mark}</span> {PRODUCT.displayName}
            </Link>
            <nav aria-label="App" className="text-sm text-slate-600">
              <Link href="/dashboard" className="hover:text-slate-900">
                Dashboard
              </Link>
            </nav>
          </div>
        </header>
        <main className="mx-auto max-w-5xl px-4 py-5 sm:px-6 sm:py-8">{children}</main>
      </body>
    </html>
  );
}
