"use server";
// Server actions of the staff console. Each is a public endpoint: it checks its caller first.
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { requireStaff } from "@/lib/auth/staff";
import { probeReauthorization } from "@/lib/installs/reauth";

/** "Check now" on a flagged install: one API call to see whether the operator has re-consented. */
export async function checkReauthorizationAction(formData: FormData): Promise<void> {
  await requireStaff();
  const installRowId = z.uuid().safeParse(formData.get("installRowId"));
  if (!installRowId.success) return;
  await probeReauthorization(installRowId.data, "staff", { force: true });
  revalidatePath(`/admin/installs/${installRowId.data}`);
}
