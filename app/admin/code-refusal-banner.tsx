// Shown on every console page while the identity provider keeps refusing authorization codes the
// app presents for the first time (lib/installs/code-claims.ts, CODE_REFUSAL_ALARM). Operators see
// a neutral "refused" page each time and can do nothing about it; only staff can fix the cause.
import { fetchCodeRefusalAlarm } from "@/lib/admin/queries";
import { CODE_REFUSAL_ALARM } from "@/lib/installs/code-claims";
import { formatTime } from "./format";

export async function CodeRefusalBanner() {
  const alarm = await fetchCodeRefusalAlarm();
  if (!alarm.raised) return null;
  return (
    <section role="alert" data-testid="code-refusal-banner" className="rounded-lg border border-red-300 bg-red-50 p-5 text-red-900">
      <h2 className="font-semibold">Installs are failing: check the redirect_uri registration</h2>
      <p className="mt-2 text-sm">
        The identity provider refused {alarm.refusals} fresh authorization codes (<code className="font-mono">invalid_grant</code>) in
        the last {CODE_REFUSAL_ALARM.windowMs / 60_000} minutes, the latest at {formatTime(alarm.latestAt)}, and no install has
        succeeded since. Operators who try to connect the app see &ldquo;The connection could not be completed&rdquo;.
      </p>
      {/* contract §5.3: the redirect_uri is registered by exact match and sent unchanged in the token request. */}
      <p className="mt-2 text-sm">
        <strong>What to check:</strong> <code className="font-mono">OAUTH_REDIRECT_URI</code> must be exactly the redirect URI
        registered with the service (scheme, host, port, path, no trailing slash difference). If it is, someone may be sending
        made-up codes to the callback; the warning clears by itself once an install succeeds.
      </p>
    </section>
  );
}
