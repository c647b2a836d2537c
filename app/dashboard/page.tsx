// The operator's data, read live from the partner API with the install's token: charge points,
// one page at a time (`page` from 0, `perPage` 1-100: public-facts.md "Lists and pagination"), and
// the first charging sessions. Nothing here comes from anywhere but the API.
import Link from "next/link";
import { DataTable } from "@/app/components/data-table";
import { z } from "zod";
import { currentOperator } from "@/lib/auth/operator-session";
import {
  fetchInstallChargePoints,
  fetchInstallCharges,
  fetchInstallSummary,
  loadDashboardInstall,
  type DashboardRead,
} from "@/lib/installs/dashboard";
import type { Charge, ChargePointPage } from "@/lib/partner-api/schemas";
import { ReauthorizeBanner } from "./install-status";

export const dynamic = "force-dynamic";

const PER_PAGE_CHOICES = [10, 25, 50, 100] as const;
const CHARGES_SHOWN = 5;

const QuerySchema = z.object({
  page: z.coerce.number().int().min(0).max(100_000).catch(0),
  perPage: z.coerce
    .number()
    .int()
    .refine((n) => (PER_PAGE_CHOICES as readonly number[]).includes(n))
    .catch(10),
});

type FailureReason = Extract<DashboardRead<unknown>, { ok: false }>["reason"];

const FAILURE_TEXT: Record<FailureReason, string> = {
  unauthorized: "The service no longer accepts this app's access. If this persists, connect the app again from the operator portal.",
  needs_reauth: "The app needs you to approve its new access before it can read your data.",
  forbidden: "The service refused this request.",
  not_granted: "You did not grant the app access to this data, so it is not shown. It becomes available if the app asks for it and you approve.",
  rate_limited: "The app has made too many requests for now. Try again in a minute.",
  unavailable: "The service did not answer. Try again in a moment.",
  timeout: "The service took too long to answer. Try again in a moment.",
  bad_request: "The app asked for something the service did not accept.",
  not_found: "The service did not find this data.",
  bad_response: "The service answered in a way the app did not understand.",
  no_grant: "The app has no access token for this install yet. Connect the app from the operator portal.",
  reinstall_needed: "The app lost its access to your data. Connect it again from the operator portal.",
  revoked: "This install was removed. Install the app again from the operator portal.",
  not_active: "The app does not read data for this install in its current state.",
};

function ReadFailure({ reason, retryInSeconds }: { reason: FailureReason; retryInSeconds?: number }) {
  // The install's rate budget is spent for now (lib/partner-api/budget.ts): say when it is back.
  const text =
    reason === "rate_limited" && retryInSeconds !== undefined
      ? `Busy: this install has used its request budget at the service for now. Try again in ${Math.max(1, retryInSeconds)} s.`
      : FAILURE_TEXT[reason];
  return (
    <p className="rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900" role="alert" data-reason={reason}>
      {text}
    </p>
  );
}

export default async function DashboardPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const query = QuerySchema.parse(await searchParams);
  // The layout rendered only for a signed-in operator with an active install; re-read both here
  // because a page must not rely on its layout for authorization.
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install) return null;

  const [chargePoints, charges] = await Promise.all([fetchInstallChargePoints(install, query), fetchInstallCharges(install, CHARGES_SHOWN)]);
  if ([chargePoints, charges].some((read) => !read.ok && read.reason === "needs_reauth")) {
    // The API has just flagged the install (contract §7): show the banner now, not on the next visit.
    const flagged = await fetchInstallSummary(install.id);
    return <ReauthorizeBanner reauthUrl={flagged?.reauthUrl ?? null} />;
  }
  return (
    <div className="space-y-8">
      <section className="space-y-4">
        {chargePoints.ok ? <ChargePoints page={chargePoints.data} /> : <ChargePointsFailure reason={chargePoints.reason} retryInSeconds={chargePoints.retryInSeconds} />}
      </section>
      <section className="space-y-3">
        <div>
          <h2 className="text-lg font-semibold">Charging sessions</h2>
          {charges.ok ? (
            <p className="text-sm text-slate-600" data-testid="charge-count">
              {`The first ${charges.data.data.length} of ${charges.data.meta.totalItemCount}, as the API lists them.`}
            </p>
          ) : null}
        </div>
        {charges.ok ? <Charges charges={charges.data.data} /> : <ReadFailure reason={charges.reason} retryInSeconds={charges.retryInSeconds} />}
      </section>
    </div>
  );
}

function ChargePointsFailure({ reason, retryInSeconds }: { reason: FailureReason; retryInSeconds?: number }) {
  return (
    <>
      <h2 className="text-lg font-semibold">Charge points</h2>
      <ReadFailure reason={reason} retryInSeconds={retryInSeconds} />
    </>
  );
}

function pageHref(page: number, perPage: number) {
  return `/dashboard?page=${page}&perPage=${perPage}`;
}

function ChargePoints({ page }: { page: ChargePointPage }) {
  const { data, meta } = page;
  const first = meta.currentPage * meta.perPage + (data.length > 0 ? 1 : 0);
  const last = meta.currentPage * meta.perPage + data.length;
  return (
    <>
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h2 className="text-lg font-semibold">Charge points</h2>
          <p className="text-sm text-slate-600" data-testid="charge-point-count">
            {meta.totalItemCount === 0 ? "No charge points" : `${first}–${last} of ${meta.totalItemCount}`}
          </p>
        </div>
        <nav className="flex items-center gap-2 text-sm" aria-label="Page size">
          <span className="text-slate-500">Per page:</span>
          {PER_PAGE_CHOICES.map((n) => (
            <Link
              key={n}
              href={pageHref(0, n)}
              className={n === meta.perPage ? "font-semibold text-slate-900" : "text-brand-700 hover:underline"}
              aria-current={n === meta.perPage ? "true" : undefined}
            >
              {n}
            </Link>
          ))}
        </nav>
      </div>

      <DataTable columns={["Name", "EVSE ID", "Location", "Type", "State"]} testId="charge-points">
        {data.map((cp) => (
          <tr key={cp.id} data-charge-point-id={cp.id}>
            <td className="px-3 py-2 font-medium">{cp.name ?? `Charge point ${cp.id}`}</td>
            <td className="px-3 py-2 font-mono text-xs">{cp.evseId ?? "—"}</td>
            <td className="px-3 py-2">{cp.location?.addressLabel ?? cp.location?.address?.city ?? "—"}</td>
            <td className="px-3 py-2">
              {cp.type ? cp.type.toUpperCase() : "—"}
              {cp.maxKw ? ` · ${cp.maxKw} kW` : ""}
            </td>
            <td className="px-3 py-2">{cp.state ?? "—"}</td>
          </tr>
        ))}
      </DataTable>

      <nav className="flex items-center justify-between text-sm" aria-label="Pagination">
        {meta.currentPage > 0 ? (
          <Link href={pageHref(meta.currentPage - 1, meta.perPage)} className="text-brand-700 hover:underline">
            ← Previous
          </Link>
        ) : (
          <span />
        )}
        <span className="text-slate-500">
          Page {meta.currentPage + 1} of {Math.max(meta.totalPageCount, 1)}
        </span>
        {meta.currentPage + 1 < meta.totalPageCount ? (
          <Link href={pageHref(meta.currentPage + 1, meta.perPage)} className="text-brand-700 hover:underline">
            Next →
          </Link>
        ) : (
          <span />
        )}
      </nav>
    </>
  );
}

function formatMoney(charge: Charge): string {
  if (charge.cost === null || charge.cost === undefined) return "—";
  const currency = charge.currency?.identifier;
  return currency ? `${charge.cost.toFixed(charge.currency?.decimals ?? 2)} ${currency}` : charge.cost.toFixed(2);
}

function Charges({ charges }: { charges: Charge[] }) {
  if (charges.length === 0) return <p className="text-sm text-slate-600">No charging sessions yet.</p>;
  return (
    <DataTable columns={["Session", "Charge point", "Started", "Energy", "Cost", "State"]} testId="charges">
      {charges.map((charge) => (
        <tr key={charge.id}>
          <td className="px-3 py-2 font-mono text-xs">{charge.id}</td>
          <td className="px-3 py-2">{charge.chargePointId ?? "—"}</td>
          <td className="px-3 py-2">{charge.startedAt ? charge.startedAt.slice(0, 16).replace("T", " ") : "—"}</td>
          <td className="px-3 py-2">
            {charge.consumedKwh !== null && charge.consumedKwh !== undefined ? `${charge.consumedKwh.toFixed(1)} kWh` : "—"}
          </td>
          <td className="px-3 py-2">{formatMoney(charge)}</td>
          <td className="px-3 py-2">{charge.state ?? "—"}</td>
        </tr>
      ))}
    </DataTable>
  );
}
