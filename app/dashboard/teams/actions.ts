"use server";
// The Teams section's server action: rename a team (lib/dashboard/teams.ts). A server action is a
// public endpoint: it checks the operator's session before anything else, and answers every failure
// with a message for the form, never an exception (which would be a 500 and lose what was typed).
import { revalidatePath } from "next/cache";
import { currentOperator } from "@/lib/auth/operator-session";
import { renameTeamForInstall } from "@/lib/dashboard/teams";
import { formOf } from "@/lib/http/server-action-body";
import { dashboardI18n } from "@/lib/i18n/request";
import { teamsTranslator } from "./i18n";
import { renameMessage, type RenameFormState } from "./rename-messages";

export async function renameTeamAction(_previous: RenameFormState, given: FormData): Promise<RenameFormState> {
  const form = formOf(given);
  const name = typeof form.get("name") === "string" ? String(form.get("name")) : "";
  const operator = await currentOperator();
  // The answer in the operator's language, chosen as for the page (lib/i18n/request.ts).
  const t = teamsTranslator((await dashboardI18n()).locale);
  if (!operator) return { status: "error", name, message: t("teams.rename.sessionEnded") };

  const outcome = await renameTeamForInstall(operator.installRowId, { teamId: form.get("teamId"), name });
  if (outcome.ok) {
    revalidatePath("/dashboard/teams");
    return { status: "saved", name: outcome.team.name, message: t("teams.rename.saved", { name: outcome.team.name }) };
  }
  // The install was just flagged (contract §7): re-render from the layout down, which shows the banner.
  if (outcome.reason === "needs_reauth") revalidatePath("/dashboard", "layout");
  return { status: "error", name, message: renameMessage(outcome, t), reason: outcome.reason };
}
