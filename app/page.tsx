// What the app is, and how an operator installs it: from the service's operator portal.
// There is deliberately no "Connect" button here (contract §1.3: the service starts the flow).
import Link from "next/link";
import { currentOperator } from "@/lib/auth/operator-session";
import { env } from "@/lib/env";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const operator = await currentOperator();
  const portalUrl = env().OPERATOR_PORTAL_URL;
  return (
    <div className="space-y-6">
      <h1 className="text-3xl font-semibold tracking-tight">Charge data for your network</h1>
      <p className="max-w-2xl text-slate-600">
        This app reads your charge points and charging sessions through the partner integration service, with your consent,
        and shows them in one dashboard.
      </p>
      {operator ? (
        <Link href="/dashboard" className="inline-block rounded-md bg-brand-600 px-4 py-2 font-medium text-white hover:bg-brand-700">
          Open your dashboard
        </Link>
      ) : (
        <div className="max-w-2xl rounded-lg border border-slate-200 bg-white p-5">
          <h2 className="font-medium">How to install</h2>
          <ol className="mt-2 list-decimal space-y-1 pl-5 text-slate-600">
            <li>Sign in to your operator portal.</li>
            <li>Find this app in the app catalogue and select Connect.</li>
            <li>Review the access it asks for and approve. You will land on your dashboard here.</li>
          </ol>
          {portalUrl ? (
            <p className="mt-4 text-sm">
              <a href={portalUrl} className="text-brand-700 underline">
                Go to the operator portal
              </a>
            </p>
          ) : null}
        </div>
      )}
    </div>
  );
}
