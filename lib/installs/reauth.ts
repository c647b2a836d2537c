// Re-authorization (contract §3, §7): scopes widened by the app owner flag every install; every API
// call for it then answers 403 NEEDS_REAUTH with a reauth_url for the operator.
import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";
import { transitionInstall, type TransitionCause } from "./state";

/** Marks the install as needing re-authorization and keeps where to send the operator. */
export async function flagNeedsReauth(installRowId: string, reauthUrl: string | null, cause: TransitionCause): Promise<void> {
  await db().$transaction(async (tx) => {
    const moved = await transitionInstall(tx, installRowId, "NEEDS_REAUTH", cause, "403 NEEDS_REAUTH: the app's scopes were widened");
    if (moved && reauthUrl) await tx.install.update({ where: { id: installRowId }, data: { reauthUrl } });
  });
  logger.warn({ installRowId }, "install needs re-authorization; the app stops calling the API for it");
}
