// What the rename form says after each outcome (lib/dashboard/teams.ts RenameTeamOutcome): one
// sentence per failure, so the operator knows whether to fix the name, approve access, or wait; in
// the operator's language (the section's catalogue, ./i18n.ts).
import type { RenameTeamOutcome } from "@/lib/dashboard/teams";
import { teamsTranslator, type TeamsTranslator } from "./i18n";

/** English, for a caller without a request. */
const ENGLISH = teamsTranslator("en");

export type RenameFormState = {
  status: "idle" | "saved" | "error";
  /** The name to show in the field: what the operator typed, kept after a failure. */
  name: string;
  message?: string;
  reason?: Extract<RenameTeamOutcome, { ok: false }>["reason"];
};

/**
 * The sentence for a refused rename. `invalid` and `service_refused` may carry the validator's or the
 * service's own message, which is shown as given (it is about the name the operator typed).
 */
export function renameMessage(outcome: Extract<RenameTeamOutcome, { ok: false }>, t: TeamsTranslator = ENGLISH): string {
  switch (outcome.reason) {
    case "invalid":
      return outcome.message ?? t("teams.rename.invalid");
    case "feature_off":
      return t("teams.rename.featureOff");
    case "not_active":
      return t("teams.rename.notActive");
    case "needs_reauth":
      return t("teams.rename.needsReauth");
    case "not_granted":
      return t("teams.rename.notGranted");
    case "unknown_team":
      return t("teams.rename.unknownTeam");
    case "service_refused":
      return outcome.message ? t("teams.rename.refusedWith", { message: outcome.message }) : t("teams.rename.refused");
    case "failed": {
      const failure = outcome.failure;
      if (failure?.kind === "rate_limited") {
        return failure.retryInSeconds !== undefined ? t("teams.rename.busyFor", { seconds: Math.max(1, failure.retryInSeconds) }) : t("teams.rename.busy");
      }
      if (failure?.kind === "timeout") return t("teams.rename.timeout");
      if (failure?.kind === "unavailable") return t("teams.rename.unavailable");
      if (failure?.kind === "reinstall_needed" || failure?.kind === "revoked" || failure?.kind === "unauthorized") {
        return t("teams.rename.lostAccess");
      }
      return t("teams.rename.unexpected");
    }
  }
}
