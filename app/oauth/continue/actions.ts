"use server";
// The choice on /oauth/continue. Server actions are public endpoints: the caller is identified by
// the pending sign-in's httpOnly cookie (settlePendingSignIn checks it), and Next.js refuses a
// server action posted from another origin (it compares Origin with Host), so a cross-site page
// cannot make the choice for the person.
import { redirect } from "next/navigation";
import { z } from "zod";
import { settlePendingSignIn } from "@/lib/auth/pending-sign-in";
import { formOf } from "@/lib/http/server-action-body";

const ChoiceSchema = z.enum(["switch", "stay"]);

export async function choosePendingSignInAction(formData: FormData): Promise<void> {
  const choice = ChoiceSchema.safeParse(formOf(formData).get("choice"));
  if (!choice.success) redirect("/oauth/continue");
  const settled = await settlePendingSignIn(choice.data);
  // Nothing pending (already chosen, expired, or not this browser's): the page says so.
  if (!settled) redirect("/oauth/continue");
  redirect(choice.data === "switch" ? "/dashboard" : "/oauth/continue/stayed");
}
