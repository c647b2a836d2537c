// Shown on console pages while the token endpoint's circuit is open (lib/oauth/circuit.ts): the
// identity provider answered invalid_client, so the app has stopped sending token requests.
import { fetchTokenEndpointCircuit } from "@/lib/admin/queries";
import { formatTime } from "./format";

export async function CircuitBanner() {
  const circuit = await fetchTokenEndpointCircuit();
  if (!circuit.open) return null;
  return (
    <section role="alert" data-testid="circuit-banner" className="rounded-lg border border-red-300 bg-red-50 p-5 text-red-900">
      <h2 className="font-semibold">Token refreshes are paused: the identity provider rejected this app&apos;s client credentials</h2>
      <p className="mt-2 text-sm">
        The token endpoint answered <code className="font-mono">invalid_client</code>
        {circuit.openedAt ? ` at ${formatTime(circuit.openedAt)}` : ""}. Every token request would fail the same way, so the app has
        paused all token refreshes. Installs keep working until their access tokens expire, then stop.
      </p>
      {/* contract §7: invalid_client → the client must be re-issued, which rotates the secret. */}
      <p className="mt-2 text-sm">
        <strong>What to do:</strong> ask the service operator to re-issue this app&apos;s client (this rotates the client secret), then
        set the new secret as <code className="font-mono">OAUTH_CLIENT_SECRET</code> in the app&apos;s configuration and restart it.
        Refreshing resumes by itself once the configuration has changed.
      </p>
      {circuit.reason ? <p className="mt-2 text-xs text-red-800">Recorded reason: {circuit.reason}</p> : null}
    </section>
  );
}
