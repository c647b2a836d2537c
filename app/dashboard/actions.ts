"use server";
// Server actions of the operator dashboard. Each is a public endpoint: it checks its caller first.
import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { currentOperator } from "@/lib/auth/operator-session";
import { checkReauthorizationNow, recordReauthRequested } from "@/lib/installs/reauth";

/** The banner's "Review and approve": note that the operator is leaving to re-consent, then go. */
export async function startReauthorizationAction(): Promise<void> {
  const operator = await currentOperator();
  if (!operator) redirect("/dashboard");
  const reauthUrl = await recordReauthRequested(operator.installRowId);
  // Nothing to follow (no longer flagged, or a link that is not the service's): show the current state.
  if (!reauthUrl) revalidatePath("/dashboard", "layout");
  redirect(reauthUrl ?? "/dashboard");
}

/**
 * The banner's "I've already approved it": the operator re-consented somewhere the app could not
 * see (the portal, a support link): one probe now (rate-limited in lib/installs/reauth.ts).
 */
export async function checkReauthorizationAction(): Promise<void> {
  const operator = await currentOperator();
  if (!operator) redirect("/dashboard");
  await checkReauthorizationNow(operator.installRowId);
  // The install's state lives in the dashboard layout, which a plain redirect to the same page would
  // keep as it is on the client: re-render from the layout down.
  revalidatePath("/dashboard", "layout");
  redirect("/dashboard");
}
