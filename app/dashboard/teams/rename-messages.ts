// What the rename form says after each outcome (lib/dashboard/teams.ts RenameTeamOutcome): one
// sentence per failure, so the operator knows whether to fix the name, approve access, or wait.
import type { RenameTeamOutcome } from "@/lib/dashboard/teams";

export type RenameFormState = {
  status: "idle" | "saved" | "error";
  /** The name to show in the field: what the operator typed, kept after a failure. */
  name: string;
  message?: string;
  reason?: Extract<RenameTeamOutcome, { ok: false }>["reason"];
};

export function renameMessage(outcome: Extract<RenameTeamOutcome, { ok: false }>): string {
  switch (outcome.reason) {
    case "invalid":
      return outcome.message ?? "Check the name.";
    case "feature_off":
      return "Renaming teams is not turned on in this app.";
    case "not_active":
      return "The app cannot change anything for this install in its current state.";
    case "needs_reauth":
      return "The app needs you to approve its new access first: use the banner at the top of the page.";
    case "not_granted":
      return "You have not allowed this app to change your teams (teams:write), so the name was not changed.";
    case "unknown_team":
      return "This team is no longer listed at the service. Reload the page to see the current list.";
    case "service_refused":
      return `The service did not accept this name${outcome.message ? `: ${outcome.message}` : "."}`;
    case "failed": {
      const failure = outcome.failure;
      if (failure?.kind === "rate_limited") {
        return failure.retryInSeconds !== undefined
          ? `Busy: this install has used its request budget at the service for now. Try again in ${Math.max(1, failure.retryInSeconds)} s.`
          : "Busy: the service asked the app to slow down. Try again in a minute.";
      }
      if (failure?.kind === "timeout") return "The service took too long to answer. The name may or may not have changed: reload the page to check.";
      if (failure?.kind === "unavailable") return "The service is not answering right now. Try again in a moment.";
      if (failure?.kind === "reinstall_needed" || failure?.kind === "revoked" || failure?.kind === "unauthorized") {
        return "The app lost its access to your data. Connect it again from the operator portal.";
      }
      return "The name was not changed: the service answered in a way the app did not expect. Try again later.";
    }
  }
}
