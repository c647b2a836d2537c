// /admin/installs/[id]: one install (by its row id): its fields, its tokens' timing, the actions
// staff may take, where its sync and rate budget stand, and its timeline: everything that happened
// to it, from every source, newest first (lib/admin/timeline.ts).
//
// The address takes the service's install_id too (/admin/installs/1042): staff are handed that
// number by operators and by the service's own tools, and are sent on to the install's row.
import type { Metadata } from "next";
import Link from "next/link";
import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import { z } from "zod";
import { fetchInstallDetail, findInstallRowId } from "@/lib/admin/queries";
import { currentStaff, requireStaff } from "@/lib/auth/staff";
import { isSafeRedirect } from "@/lib/installs/reauth";
import { dataPurgeDate } from "@/lib/sync/retention";
import { fetchBudgetStatus, fetchSyncStatus, fetchTimeline, type TimelineEntry } from "@/lib/admin/timeline";
import { ActionsPanel } from "./actions-panel";
import { CopyLinkButton } from "./copy-link";
import { CircuitBanner } from "../../../circuit-banner";
import { formatDistance, formatTime } from "../../../format";
import { StatusBadge } from "../../../status-badge";

export const dynamic = "force-dynamic";

const ParamsSchema = z.object({ id: z.uuid() });
// The service's install_id: a positive integer (contract §2), digits only, within PostgreSQL's integer.
const InstallIdSchema = z.object({ id: z.string().regex(/^[1-9][0-9]{0,9}$/).transform(Number).pipe(z.number().int().max(2_147_483_647)) });

// The page and its title read the same install once per request.
const loadInstall = cache(fetchInstallDetail);

/** The operator's name first, so a tab, a bookmark and the history say whose install it is. */
function operatorLabel(install: { operatorName: string | null; operatorId: string }): string {
  return install.operatorName ?? `Operator ${install.operatorId}`;
}

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const parsed = ParamsSchema.safeParse(await params);
  // The title is rendered for anyone who asks: it names the operator only to a signed-in staff member.
  const install = parsed.success && (await currentStaff()) ? await loadInstall(parsed.data.id) : null;
  return { title: install ? `${operatorLabel(install)}, install ${install.installId ?? "pending"} · Staff console` : "Install · Staff console" };
}

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

const KIND_LABEL: Record<TimelineEntry["kind"], string> = { state: "State", webhook: "Webhook", sync: "Sync", staff: "Staff", tokens: "Tokens" };
const TONE_CLASS: Record<TimelineEntry["tone"], string> = {
  ok: "bg-emerald-100 text-emerald-800",
  warn: "bg-amber-100 text-amber-900",
  bad: "bg-red-100 text-red-800",
  info: "bg-slate-100 text-slate-700",
};

function TimelineItem({ entry }: { entry: TimelineEntry }) {
  return (
    <li className="flex flex-col gap-1 px-3 py-2 sm:flex-row sm:gap-3" data-kind={entry.kind}>
      <div className="flex shrink-0 items-center gap-2 sm:w-64">
        <span className={`rounded px-1.5 py-0.5 text-xs font-medium ${TONE_CLASS[entry.tone]}`}>{KIND_LABEL[entry.kind]}</span>
        <span className="text-xs whitespace-nowrap text-slate-500">{formatTime(entry.at)}</span>
      </div>
      <div className="min-w-0">
        <div className="break-words">{entry.title}</div>
        {entry.detail ? <div className="text-xs break-words text-slate-600">{entry.detail}</div> : null}
      </div>
    </li>
  );
}

const Time = ({ at }: { at: Date | null }) => (at ? <>{formatTime(at)}</> : <span className="text-slate-500">—</span>);

export default async function InstallPage({ params }: { params: Promise<{ id: string }> }) {
  await requireStaff();
  const raw = await params;
  const parsed = ParamsSchema.safeParse(raw);
  if (!parsed.success) {
    const byInstallId = InstallIdSchema.safeParse(raw);
    const rowId = byInstallId.success ? await findInstallRowId(byInstallId.data.id) : null;
    if (rowId) redirect(`/admin/installs/${rowId}`);
    notFound();
  }
  const install = await loadInstall(parsed.data.id);
  if (!install) notFound();
  const [timeline, syncStatus, budget] = await Promise.all([fetchTimeline(install), fetchSyncStatus(install.id), fetchBudgetStatus(install.id)]);
  const { grant, asOf } = install;
  const purgeOn = dataPurgeDate(install);
  // The reauth_url came in an API answer: staff copy it to operators, so it is a link only when it
  // is the service's own (REAUTH_URL_ORIGINS); any other is shown as a warning, not as an address.
  const reauthHref = install.reauthUrl && isSafeRedirect(install.reauthUrl) ? install.reauthUrl : undefined;

  return (
    <div className="space-y-6">
      <CircuitBanner />
      <Link href="/admin" className="text-sm text-brand-700 hover:underline">
        ← All installs
      </Link>

      <section className="rounded-lg border border-slate-200 bg-white p-4 sm:p-5" aria-label="Install">
        <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
          <h1 className="min-w-0 break-words text-xl font-semibold" data-testid="detail-title">
            {operatorLabel(install)}
            <span className="text-slate-600">
              {" "}
              · Install <span className="font-mono">{install.installId ?? "pending"}</span>
            </span>
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
            {reauthHref ? (
              <div className="mt-2 flex flex-wrap items-center gap-2">
                <CopyLinkButton href={reauthHref} />
                <span className="text-xs">Send it to the operator; &quot;Check re-authorization now&quot; below asks the API whether they approved.</span>
              </div>
            ) : null}
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
            {purgeOn ? (
              // A209: a lost install (REINSTALL_NEEDED) may be an uninstall whose install.revoked was lost.
              <Field label="Synced data deleted" testId="detail-data-deleted">
                <Time at={purgeOn} /> <span className="text-slate-500">(SYNC_RETENTION_DAYS after {install.status === "REVOKED" ? "the uninstall" : "it was lost"}, unless reconnected)</span>
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
                <pre className="overflow-x-auto rounded bg-slate-50 p-2 text-xs" tabIndex={0} aria-label="Configuration as received">{JSON.stringify(install.config, null, 2)}</pre>
              )}
            </Field>
          </dl>
        </div>
      </section>

      <ActionsPanel installRowId={install.id} />

      <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
        <section className="rounded-lg border border-slate-200 bg-white p-4 text-sm" aria-labelledby="sync-heading" data-testid="sync-status">
          <h2 id="sync-heading" className="font-semibold">
            Sync
          </h2>
          {syncStatus.length === 0 ? (
            <p className="mt-2 text-slate-600">Never synced: no resource has a checkpoint yet.</p>
          ) : (
            <ul className="mt-2 space-y-2">
              {syncStatus.map((resource) => (
                <li key={resource.resource} data-resource={resource.resource}>
                  <span className="font-medium">{resource.label}</span>
                  <div className="text-slate-600">
                    Last complete copy: {resource.lastPassEndedAt ? `${formatTime(resource.lastPassEndedAt)} (${formatDistance(resource.lastPassEndedAt, asOf)})` : "none yet"}
                    {resource.lastFullPassEndedAt ? `; last full pass ${formatDistance(resource.lastFullPassEndedAt, asOf)}` : ""}
                  </div>
                  {resource.passUnderWay ? (
                    <div className="text-slate-600">
                      A {resource.passUnderWay.kind ?? ""} pass is under way: it resumes at page {resource.passUnderWay.nextPage}.
                    </div>
                  ) : null}
                  {resource.lastRun ? (
                    <div className={resource.lastRun.outcome === "failed" ? "text-red-700" : "text-slate-600"}>
                      Latest run: {resource.lastRun.outcome}
                      {resource.lastRun.errorKind ? ` (${resource.lastRun.errorKind})` : ""}, started {formatDistance(resource.lastRun.startedAt, asOf)}
                      {resource.lastRun.recordsCleaned > 0 ? `; ${resource.lastRun.recordsCleaned} record(s) held a NUL or a lone surrogate, stored with U+FFFD in its place` : ""}
                    </div>
                  ) : null}
                </li>
              ))}
            </ul>
          )}
        </section>
        <section className="rounded-lg border border-slate-200 bg-white p-4 text-sm" aria-labelledby="budget-heading" data-testid="budget-status">
          <h2 id="budget-heading" className="font-semibold">
            Rate budget
          </h2>
          {budget ? (
            <>
              <p className="mt-2">
                <span className="text-lg font-semibold tabular-nums" data-testid="budget-in-use">
                  {budget.inUse}
                </span>{" "}
                of {budget.quota.toLocaleString("en")} requests per {budget.windowSeconds} s in use
              </p>
              <p className="text-slate-600">
                {budget.inUse === 0 ? "Whole: nothing sent recently." : `Whole again ${formatDistance(budget.fullAt, asOf)} if nothing more is sent.`} Pages keep a
                reserve that background work never takes (docs/spec-gaps.md).
              </p>
              {budget.hold ? (
                <p className="mt-2 text-amber-800" data-testid="budget-hold">
                  Held until {formatTime(budget.hold.until)}: the service said “{budget.hold.serviceSaid ?? "wait"}”. The app waits one rate window at most; staff may
                  clear the hold (Actions).
                </p>
              ) : null}
            </>
          ) : (
            <p className="mt-2 text-slate-600">No API call yet: the budget is sized from the service&apos;s first answer.</p>
          )}
        </section>
      </div>

      <section className="space-y-2" aria-labelledby="timeline-heading">
        <h2 id="timeline-heading" className="text-lg font-semibold">
          Timeline
        </h2>
        <p className="text-sm text-slate-600">State changes, webhooks, syncs, staff actions and token refreshes, newest first (the latest 100).</p>
        <ol className="divide-y divide-slate-100 rounded-lg border border-slate-200 bg-white text-sm" data-testid="timeline">
          {timeline.length === 0 ? <li className="px-3 py-4 text-center text-slate-500">Nothing recorded yet.</li> : null}
          {timeline.map((entry) => (
            <TimelineItem key={entry.key} entry={entry} />
          ))}
        </ol>
      </section>
    </div>
  );
}
