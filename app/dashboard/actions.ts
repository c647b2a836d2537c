"use server";
// Server actions of the operator dashboard. Each is a public endpoint: it checks its caller first.
import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { currentOperator } from "@/lib/auth/operator-session";
import { recordReauthRequested } from "@/lib/installs/reauth";

/** The banner's "Review and approve": note that the operator is leaving to re-consent, then go. */
export async function startReauthorizationAction(): Promise<void> {
  const operator = await currentOperator();
  if (!operator) redirect("/dashboard");
  const reauthUrl = await recordReauthRequested(operator.installRowId);
  // Nothing to follow (no longer flagged, or a link that is not the service's): show the current state.
  if (!reauthUrl) revalidatePath("/dashboard", "layout");
  redirect(reauthUrl ?? "/dashboard");
}
