// Where the redirect_uri sends an operator when an install could not be completed. Each reason
// says what happened and what to do; nothing was stored for a failed redemption.
import type { Metadata } from "next";
import { z } from "zod";
import { env } from "@/lib/env";
import type { InstallFailureReason } from "@/lib/installs/connect";

export const metadata: Metadata = { title: "The app could not be installed" };

export const dynamic = "force-dynamic";

const RESTART = "Go back to the operator portal, open this app in the catalogue and select Connect again.";

const MESSAGES: Record<InstallFailureReason, { title: string; body: string; action: string }> = {
  access_denied: {
    title: "The app was not connected",
    body: "The consent request was declined, so the app has no access to your data.",
    action: "If that was a mistake, " + RESTART.charAt(0).toLowerCase() + RESTART.slice(1),
  },
  authorization_error: {
    title: "The connection could not be completed",
    body: "The service reported an error before handing the connection to this app.",
    action: RESTART,
  },
  // The service refused the code without saying why in a way the app can rely on (contract §7 gives
  // one error for three causes): name them all, and both ways out.
  code_refused: {
    title: "The connection could not be completed",
    body:
      "The service refused this connection link. Usually it has expired (a connection must be completed within a minute of approving it) or was already used; it can also mean that this app's redirect address does not match the one registered with the service.",
    action: RESTART + " If it keeps happening, please tell the app's provider: their redirect address may be misconfigured.",
  },
  issuer_mismatch: {
    title: "The connection could not be verified",
    body:
      "The response that brought you here did not come from the service this app is set up for, so the app did not use it. Nothing was connected, and your data was not shared with this app.",
    action: RESTART + " If it keeps happening, please tell the app's provider.",
  },
  code_used: {
    title: "This connection link was already used",
    body: "Each connection link works once. This one was used before (perhaps by a reload or a second tab).",
    action: RESTART,
  },
  code_rejected: {
    title: "The connection was refused",
    body: "The service did not accept this connection link.",
    action: RESTART,
  },
  redirect_mismatch: {
    title: "This app is misconfigured",
    body: "The service sent you to an address this app is not configured with, so the connection could not be completed.",
    action:
      "Please tell the app's provider: the app's OAUTH_REDIRECT_URI must be exactly the redirect URI registered with the service. Then connect again from the operator portal.",
  },
  app_misconfigured: {
    title: "This app is misconfigured",
    body: "The service did not recognise this app's credentials, so no operator can connect it right now. This is not something you can fix.",
    action:
      "Please tell the app's provider. They need to ask the service operator to re-issue the app's client credentials (this rotates the secret) and update the app's configuration.",
  },
  service_unavailable: {
    title: "The service did not answer",
    body: "The connection could not be completed because the service did not answer in time.",
    action: "Wait a minute, then " + RESTART.charAt(0).toLowerCase() + RESTART.slice(1),
  },
  code_in_progress: {
    title: "Your connection is still being completed",
    body: "This connection link is being completed by another request from your browser (for example after a double click).",
    action: "Open your dashboard in a moment. If it does not show your data, connect the app again from the operator portal.",
  },
  install_revoked: {
    title: "This install was removed",
    body: "The install was removed in the operator portal before the app could finish connecting it.",
    action: RESTART,
  },
  app_failed_after_redemption: {
    title: "The app could not save your connection",
    body: "The connection was approved, but the app could not store it. Nothing was kept.",
    action: "Wait a minute, then " + RESTART.charAt(0).toLowerCase() + RESTART.slice(1),
  },
  bad_request: {
    title: "This page can only be opened by the service",
    body: "This address is where the operator portal sends you after you approve the app. It was opened without the details the service adds.",
    action: RESTART,
  },
  app_unavailable: {
    title: "The app is having trouble",
    body: "The app could not save your connection just now. Nothing was stored.",
    action: RESTART,
  },
};

const ReasonSchema = z.enum(Object.keys(MESSAGES) as [InstallFailureReason, ...InstallFailureReason[]]).catch("code_refused");

export default async function InstallFailedPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const reason = ReasonSchema.parse((await searchParams).reason);
  const message = MESSAGES[reason];
  const portalUrl = env().OPERATOR_PORTAL_URL;
  return (
    <div className="max-w-2xl rounded-lg border border-amber-300 bg-amber-50 p-6" role="alert" data-testid="install-failure" data-reason={reason}>
      <h1 className="text-xl font-semibold">{message.title}</h1>
      <p className="mt-2 text-slate-700">{message.body}</p>
      <p className="mt-4 font-medium text-slate-900">{message.action}</p>
      {portalUrl && reason !== "app_misconfigured" && reason !== "redirect_mismatch" ? (
        <a href={portalUrl} className="mt-4 inline-block text-brand-700 underline">
          Open the operator portal
        </a>
      ) : null}
    </div>
  );
}
