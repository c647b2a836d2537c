// /admin/installs/[id]: one install (by its row id): its fields, its tokens' timing, its status
// history (install_events) and the webhook deliveries that named its install_id.
import { DataTable } from "@/app/components/data-table";
import Link from "next/link";
import { notFound } from "next/navigation";
import { z } from "zod";
import { fetchInstallDetail } from "@/lib/admin/queries";
import { requireStaff } from "@/lib/auth/staff";
import { isSafeRedirect } from "@/lib/installs/reauth";
import { checkReauthorizationAction } from "./actions";
import { ActionsPanel } from "./actions-panel";
import { CircuitBanner } from "../../../circuit-banner";
import { formatDistance, formatTime } from "../../../format";
import { STATUS_LABEL, StatusBadge } from "../../../status-badge";

export const dynamic = "force-dynamic";

const ParamsSchema = z.object({ id: z.uuid() });

function Field({ label, children, testId }: { label: string; children: React.ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-3 gap-3 py-1.5">
      <dt className="text-slate-500">{label}</dt>
      <dd className="col-span-2 break-words" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

const Time = ({ at }: { at: Date | null }) => (at ? <>{formatTime(at)}</> : <span className="text-slate-400">—</span>);

export default async function InstallPage({ params }: { params: Promise<{ id: string }> }) {
  await requireStaff();
  const parsed = ParamsSchema.safeParse(await params);
  if (!parsed.success) notFound();
  const install = await fetchInstallDetail(parsed.data.id);
  if (!install) notFound();
  const { grant, asOf } = install;
  // The reauth_url came in an API answer: staff copy it to operators, so it is a link only when it
  // is the service's own (REAUTH_URL_ORIGINS); any other is shown as a warning, not as an address.
  const reauthHref = install.reauthUrl && isSafeRedirect(install.reauthUrl) ? install.reauthUrl : undefined;

  return (
    <div className="space-y-6">
      <CircuitBanner />
      <Link href="/admin" className="text-sm text-brand-700 hover:underline">
        ← All installs
      </Link>

      <section className="rounded-lg border border-slate-200 bg-white p-5" aria-label="Install">
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="text-xl font-semibold">
            Install <span className="font-mono">{install.installId ?? "pending"}</span>
          </h1>
          <StatusBadge status={install.status} />
        </div>

        {install.status === "NEEDS_REAUTH" ? (
          <div className="mt-4 rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900" data-testid="reauth">
            The operator must approve the app&apos;s new access (contract §7). Their re-authorization link:{" "}
            {install.reauthUrl ? (
              reauthHref ? (
                <a href={reauthHref} rel="noreferrer" className="font-mono break-all underline" data-testid="reauth-url">
                  {install.reauthUrl}
                </a>
              ) : (
                <span className="font-medium" data-testid="reauth-url-refused">
                  not shown: the stored link points outside the service&apos;s addresses (REAUTH_URL_ORIGINS), so the app will not
                  send anyone there. Ask the operator to open the app from their operator portal.
                </span>
              )
            ) : (
              <span>not known (the service has not sent one the app may follow; one outside its addresses is logged and dropped).</span>
            )}
            <form action={checkReauthorizationAction} className="mt-2">
              <input type="hidden" name="installRowId" value={install.id} />
              <button type="submit" className="rounded-md border border-amber-400 bg-white px-3 py-1 text-xs font-medium hover:bg-amber-100">
                Check now
              </button>
              <span className="ml-2 text-xs">One call to the API: clears the flag if the operator has approved.</span>
            </form>
          </div>
        ) : null}

        <div className="mt-4 grid grid-cols-1 gap-x-10 text-sm md:grid-cols-2">
          <dl className="divide-y divide-slate-100">
            <Field label="install_id" testId="detail-install-id">
              <span className="font-mono">{install.installId ?? "pending"}</span>
            </Field>
            <Field label="operator_id" testId="detail-operator-id">
              <span className="font-mono">{install.operatorId}</span>
            </Field>
            <Field label="slug">{install.slug ?? "—"}</Field>
            <Field label="client_id">
              <span className="font-mono">{install.clientId}</span>
            </Field>
            <Field label="Row id">
              <span className="font-mono text-xs">{install.id}</span>
            </Field>
            <Field label="Granted scopes" testId="detail-scopes">
              {install.grantedScopes.join(" ") || "none"}
            </Field>
            <Field label="Created">
              <Time at={install.createdAt} />
            </Field>
            <Field label="Status since">
              <Time at={install.statusChangedAt} />
            </Field>
            {install.revokedAt ? (
              <Field label="Revoked">
                <Time at={install.revokedAt} />
              </Field>
            ) : null}
          </dl>
          <dl className="divide-y divide-slate-100">
            {grant ? (
              <>
                <Field label="Access token expires">
                  <Time at={grant.accessTokenExpiresAt} />{" "}
                  <span className="text-slate-500">({formatDistance(grant.accessTokenExpiresAt, asOf)})</span>
                </Field>
                <Field label="Refresh token expires">
                  <Time at={grant.refreshTokenExpiresAt} />
                  {grant.refreshTokenExpiresAt ? (
                    <span className="text-slate-500"> ({formatDistance(grant.refreshTokenExpiresAt, asOf)})</span>
                  ) : null}
                </Field>
                <Field label="Last refreshed">{grant.lastRefreshedAt ? formatTime(grant.lastRefreshedAt) : "never"}</Field>
                <Field label="Refresh in flight" testId="detail-refresh-state">
                  {grant.refreshStartedAt ? (
                    <span className="font-medium text-amber-800">refresh outcome unknown since {formatTime(grant.refreshStartedAt)}</span>
                  ) : (
                    "no"
                  )}
                </Field>
                <Field label="Token scope">{grant.scope}</Field>
                <Field label="Grant version">{grant.version}</Field>
              </>
            ) : (
              <Field label="Tokens">none stored</Field>
            )}
            <Field label="Configuration">
              {install.config === null ? (
                "—"
              ) : (
                <pre className="overflow-x-auto rounded bg-slate-50 p-2 text-xs">{JSON.stringify(install.config, null, 2)}</pre>
              )}
            </Field>
          </dl>
        </div>
      </section>

      <ActionsPanel installRowId={install.id} />

      <section className="space-y-2">
        <h2 className="text-lg font-semibold">Status history</h2>
        <DataTable columns={["Time (UTC)", "Change", "Cause", "Detail"]} testId="history">
          {install.events.length === 0 ? (
            <tr>
              <td colSpan={4} className="px-3 py-4 text-center text-slate-500">
                No status changes recorded.
              </td>
            </tr>
          ) : null}
          {install.events.map((event) => (
            <tr key={event.id}>
              <td className="px-3 py-2 whitespace-nowrap">{formatTime(event.occurredAt)}</td>
              <td className="px-3 py-2">
                {event.fromStatus ? STATUS_LABEL[event.fromStatus].label : "—"} → {STATUS_LABEL[event.toStatus].label}
              </td>
              <td className="px-3 py-2 font-mono text-xs">{event.cause}</td>
              <td className="px-3 py-2 text-slate-700">{event.detail ?? ""}</td>
            </tr>
          ))}
        </DataTable>
      </section>

      <section className="space-y-2">
        <h2 className="text-lg font-semibold">Webhook deliveries</h2>
        {install.installId === null ? (
          <p className="text-sm text-slate-600">
            This install has no install_id yet, so no webhook delivery can be matched to it (docs/spec-gaps.md, A2).
          </p>
        ) : (
          <DataTable columns={["Received (UTC)", "Type", "Outcome", "Detail"]} testId="deliveries">
            {install.deliveries.length === 0 ? (
              <tr>
                <td colSpan={4} className="px-3 py-4 text-center text-slate-500">
                  No webhook deliveries for install {install.installId}.
                </td>
              </tr>
            ) : null}
            {install.deliveries.map((delivery) => (
              <tr key={delivery.id}>
                <td className="px-3 py-2 whitespace-nowrap">{formatTime(delivery.receivedAt)}</td>
                <td className="px-3 py-2 font-mono text-xs">{delivery.eventType ?? "(unknown)"}</td>
                <td className="px-3 py-2">{delivery.outcome}</td>
                <td className="px-3 py-2 text-slate-700">{delivery.detail ?? ""}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>
    </div>
  );
}
