// The install's identity and state, shown above every dashboard page.
import type { InstallSummary } from "@/lib/installs/dashboard";
import { isSafeRedirect } from "@/lib/installs/reauth";
import { checkReauthorizationAction, startReauthorizationAction } from "./actions";

const STATUS_TEXT: Record<InstallSummary["status"], { label: string; tone: string; explain?: string }> = {
  ACTIVE: { label: "Connected", tone: "bg-emerald-100 text-emerald-800" },
  NEEDS_REAUTH: {
    label: "Re-authorization needed",
    tone: "bg-amber-100 text-amber-900",
  },
  REINSTALL_NEEDED: {
    label: "Re-install needed",
    tone: "bg-red-100 text-red-800",
    explain:
      "The app lost its access to your data. Open the operator portal, find this app in the catalogue and connect it again.",
  },
  REVOKED: {
    label: "Uninstalled",
    tone: "bg-slate-200 text-slate-700",
    explain: "This install was removed. To use the app again, install it from the operator portal.",
  },
};

export function InstallStatusPanel({ install }: { install: InstallSummary }) {
  const status = STATUS_TEXT[install.status];
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-5" aria-label="Install">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold">Operator {install.operatorId}</h1>
        <span className={`rounded-full px-2.5 py-0.5 text-xs font-medium ${status.tone}`} data-testid="install-status">
          {status.label}
        </span>
      </div>
      <dl className="mt-3 grid grid-cols-1 gap-x-6 gap-y-1 text-sm text-slate-600 sm:grid-cols-3">
        <div>
          <dt className="inline">Install ID: </dt>
          <dd className="inline font-mono" data-testid="install-id">
            {install.installId ?? "pending"}
          </dd>
        </div>
        <div>
          <dt className="inline">Installed: </dt>
          <dd className="inline">{install.createdAt.toISOString().slice(0, 10)}</dd>
        </div>
        <div>
          <dt className="inline">Access granted: </dt>
          <dd className="inline">{install.grantedScopes.join(", ") || "none"}</dd>
        </div>
      </dl>
      {status.explain ? <p className="mt-3 text-sm text-slate-700">{status.explain}</p> : null}
      {install.status === "NEEDS_REAUTH" ? <ReauthorizeBanner reauthUrl={install.reauthUrl} /> : null}
      <InstallConfiguration config={install.config} />
    </section>
  );
}

/** The per-install configuration the operator set in the portal (install.config.updated). */
function InstallConfiguration({ config }: { config: unknown }) {
  if (!config || typeof config !== "object" || Array.isArray(config)) return null;
  const entries = Object.entries(config as Record<string, unknown>);
  if (entries.length === 0) return null;
  return (
    <div className="mt-3 text-sm" data-testid="install-config">
      <h2 className="font-medium text-slate-700">Configuration</h2>
      <dl className="mt-1 grid grid-cols-1 gap-x-6 gap-y-1 text-slate-600 sm:grid-cols-3">
        {entries.map(([key, value]) => (
          <div key={key}>
            <dt className="inline">{key}: </dt>
            <dd className="inline font-mono">{typeof value === "string" ? value : JSON.stringify(value)}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

/**
 * contract §7: show the state in the product and send the operator to reauth_url. The link is the
 * service's own page (never an authorization URL built by the app), and only ever the service's: a
 * reauth_url at any other origin gets no button, only the way through the portal.
 */
export function ReauthorizeBanner({ reauthUrl }: { reauthUrl: string | null }) {
  const followable = reauthUrl !== null && isSafeRedirect(reauthUrl);
  return (
    <div className="mt-4 rounded-md border border-amber-300 bg-amber-50 p-4" role="status" data-testid="reauth-banner">
      <h2 className="font-semibold text-amber-900">Please approve the app&rsquo;s new access</h2>
      <p className="mt-1 text-sm text-amber-900">
        The app&rsquo;s provider has changed what the app needs to read. Until you approve the new access, the app has stopped reading
        your data, and nothing here is updated. Your existing data and settings are kept.
      </p>
      <div className="mt-3 flex flex-wrap items-center gap-3">
        {followable ? (
          <form action={startReauthorizationAction}>
            <button type="submit" className="rounded-md bg-amber-600 px-4 py-2 text-sm font-medium text-white hover:bg-amber-700">
              Review and approve
            </button>
          </form>
        ) : (
          <p className="text-sm text-amber-900">Open the app in your operator portal to review and approve the new access.</p>
        )}
        {/* Approved from the portal or a support link instead: let the operator ask the app to look. */}
        <form action={checkReauthorizationAction}>
          <button
            type="submit"
            className="rounded-md border border-amber-400 bg-white px-4 py-2 text-sm font-medium text-amber-900 hover:bg-amber-100"
            data-testid="reauth-check"
          >
            I&rsquo;ve already approved it
          </button>
        </form>
      </div>
    </div>
  );
}
