// Why a live read of the API showed nothing, in words an operator can act on: one text per reason
// lib/installs/dashboard.ts can give.
import type { DashboardRead } from "@/lib/installs/dashboard";
import type { MessageKey } from "@/lib/i18n/messages";
import { dashboardI18n } from "@/lib/i18n/request";
import { RetryButton } from "./retry-button";

export type FailureReason = Extract<DashboardRead<unknown>, { ok: false }>["reason"];

// The words are in the catalogue (messages/*.json `readFailure.<reason>`).
const FAILURE_TEXT: Record<FailureReason, MessageKey> = {
  unauthorized: "readFailure.unauthorized",
  needs_reauth: "readFailure.needs_reauth",
  forbidden: "readFailure.forbidden",
  not_granted: "readFailure.not_granted",
  rate_limited: "readFailure.rate_limited",
  unavailable: "readFailure.unavailable",
  timeout: "readFailure.timeout",
  bad_request: "readFailure.bad_request",
  not_found: "readFailure.not_found",
  bad_response: "readFailure.bad_response",
  no_grant: "readFailure.no_grant",
  reinstall_needed: "readFailure.reinstall_needed",
  revoked: "readFailure.revoked",
  not_active: "readFailure.not_active",
};

/** The reasons that pass by themselves: for these, the operator gets a button to try again. */
export const PASSING_FAILURES: ReadonlySet<string> = new Set<FailureReason>(["unavailable", "timeout", "rate_limited", "bad_response"]);

export async function ReadFailure({ reason, retryInSeconds }: { reason: FailureReason; retryInSeconds?: number }) {
  const { t } = await dashboardI18n();
  // The install's rate budget is spent for now (lib/partner-api/budget.ts): say when it is back.
  const text =
    reason === "rate_limited" && retryInSeconds !== undefined
      ? t("readFailure.busy", { seconds: Math.max(1, retryInSeconds) })
      : t(FAILURE_TEXT[reason]);
  return (
    <div className="space-y-3 rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900" role="alert" data-reason={reason}>
      <p>{text}</p>
      {PASSING_FAILURES.has(reason) ? <RetryButton /> : null}
    </div>
  );
}
