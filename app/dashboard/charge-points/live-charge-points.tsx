// The charge points read live from the partner API, one page at a time (`page` from 0, `perPage`
// 1-100: public-facts.md "Lists and pagination"): what the page shows until the sync's first pass
// over the charge points has ended. The API offers no search or filters, so neither does this view;
// the note says when they come. An interactive request in the install's rate budget.
import { z } from "zod";
import { fetchInstallChargePoints, fetchInstallSummary, type InstallSummary } from "@/lib/installs/dashboard";
import type { ChargePointPage } from "@/lib/partner-api/schemas";
import { PER_PAGE_CHOICES, firstValues } from "@/lib/dashboard/charge-points";
import { ReauthorizeBanner } from "../install-status";
import { dashboardI18n } from "@/lib/i18n/request";
import { ChargePointStateBadge, powerLabel } from "../_components/charge-point-state";
import { PageSizeLinks, Pagination, rangeText } from "../_components/pagination";
import { ReadFailure } from "../_components/read-failure";
import { DataTable } from "@/app/components/data-table";

const LiveQuerySchema = z.object({
  page: z.coerce.number().int().min(0).max(100_000).catch(0),
  perPage: z.coerce
    .number()
    .int()
    .refine((n) => (PER_PAGE_CHOICES as readonly number[]).includes(n))
    .catch(10),
});

export function parseLiveQuery(params: Record<string, string | string[] | undefined>) {
  return LiveQuerySchema.parse(firstValues(params));
}

const hrefFor = (page: number, perPage: number) => `/dashboard/charge-points?page=${page}&perPage=${perPage}`;

export async function LiveChargePoints({ install, query }: { install: InstallSummary; query: z.infer<typeof LiveQuerySchema> }) {
  const read = await fetchInstallChargePoints(install, query);
  if (!read.ok && read.reason === "needs_reauth") {
    // The API has just flagged the install (contract §7): show the banner now, not on the next visit.
    const flagged = await fetchInstallSummary(install.id);
    return <ReauthorizeBanner reauthUrl={flagged?.reauthUrl ?? null} />;
  }
  const { t } = await dashboardI18n();
  return (
    <section className="space-y-4">
      <div>
        <h2 className="text-lg font-semibold">{t("chargePoints.title")}</h2>
        <p className="text-sm text-slate-600" data-testid="copy-pending">
          {t("chargePoints.live")}
        </p>
      </div>
      {read.ok ? <LiveTable page={read.data} /> : <ReadFailure reason={read.reason} retryInSeconds={read.retryInSeconds} />}
    </section>
  );
}

async function LiveTable({ page }: { page: ChargePointPage }) {
  const { t, f } = await dashboardI18n();
  const { data, meta } = page;
  return (
    <>
      <div className="flex flex-wrap items-end justify-between gap-3">
        <p className="text-sm text-slate-600" data-testid="charge-point-count">
          {meta.totalItemCount === 0 ? t("chargePoints.none") : rangeText(meta.currentPage, meta.perPage, data.length, meta.totalItemCount, { t, f })}
        </p>
        <PageSizeLinks choices={PER_PAGE_CHOICES} current={meta.perPage} hrefFor={(n) => hrefFor(0, n)} words={{ t, f }} />
      </div>
      <DataTable
        label={t("chargePoints.tableLabel")}
        testId="charge-points"
        columns={[
          { label: t("chargePoints.col.name") },
          { label: t("chargePoints.col.state") },
          { label: t("chargePoints.col.type"), className: "hidden sm:table-cell" },
          { label: t("chargePoints.col.location"), className: "hidden md:table-cell" },
          { label: t("chargePoint.evseId"), className: "hidden lg:table-cell" },
        ]}
      >
        {data.map((cp) => (
          <tr key={cp.id} data-charge-point-id={cp.id}>
            <td className="px-3 py-2 font-medium">{cp.name ?? t("chargePoints.fallback", { id: cp.id })}</td>
            <td className="px-3 py-2">
              <ChargePointStateBadge state={cp.state} t={t} />
            </td>
            <td className="hidden px-3 py-2 sm:table-cell">{powerLabel(cp.type, cp.maxKw, f)}</td>
            <td className="hidden px-3 py-2 md:table-cell">{cp.location?.addressLabel ?? cp.location?.address?.city ?? "—"}</td>
            <td className="hidden px-3 py-2 font-mono text-xs lg:table-cell">{cp.evseId ?? "—"}</td>
          </tr>
        ))}
      </DataTable>
      <Pagination page={meta.currentPage} perPage={meta.perPage} total={meta.totalItemCount} hrefFor={(p) => hrefFor(p, meta.perPage)} words={{ t, f }} />
    </>
  );
}
