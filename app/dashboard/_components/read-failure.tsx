// Why a live read of the API showed nothing, in words an operator can act on: one text per reason
// lib/installs/dashboard.ts can give.
import type { DashboardRead } from "@/lib/installs/dashboard";
import { RetryButton } from "./retry-button";

export type FailureReason = Extract<DashboardRead<unknown>, { ok: false }>["reason"];

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
  // Reached only while re-authorization is pending (the layout shows no section otherwise).
  not_active: "The app reads nothing from the service until you approve its new access, and has no copy of these yet.",
};

/** The reasons that pass by themselves: for these, the operator gets a button to try again. */
export const PASSING_FAILURES: ReadonlySet<string> = new Set<FailureReason>(["unavailable", "timeout", "rate_limited", "bad_response"]);

export function ReadFailure({ reason, retryInSeconds }: { reason: FailureReason; retryInSeconds?: number }) {
  // The install's rate budget is spent for now (lib/partner-api/budget.ts): say when it is back.
  const text =
    reason === "rate_limited" && retryInSeconds !== undefined
      ? `Busy: this install has used its request budget at the service for now. Try again in ${Math.max(1, retryInSeconds)} s.`
      : FAILURE_TEXT[reason];
  return (
    <div className="space-y-3 rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900" role="alert" data-reason={reason}>
      <p>{text}</p>
      {PASSING_FAILURES.has(reason) ? <RetryButton /> : null}
    </div>
  );
}
