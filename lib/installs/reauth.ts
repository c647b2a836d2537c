// Re-authorization (contract §3, §5.9, §7): when the app owner widens the app's scopes, every
// install is flagged, and every API call for it answers 403 NEEDS_REAUTH with a reauth_url. The
// app then stops calling the API for that install (pages, jobs, sync) and shows the operator a
// banner with a button to reauth_url, until the operator has re-consented.
//
// How the flag clears: the app cannot be told (no webhook is stated for it), so it asks, once, when
// the answer can have changed: the operator left for reauth_url through the banner's button and
// came back to the app (the service's consent page sends them back to the dashboard), or a staff
// member asks in the console. Nothing else calls the API for a flagged install (one exception:
// settling a refresh whose outcome is unknown probes the old token once, lib/oauth/refresh.ts,
// because keep-alive refreshes flagged installs too). There is
// deliberately no periodic probe: only the operator can re-consent, so a probe every few minutes
// for an install nobody looks at would only spend its rate budget and fill the service's logs.
import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";
import { withAccessToken } from "@/lib/oauth/access";
import { PartnerApiError, fetchConsumer } from "@/lib/partner-api/client";
import { isServiceUrl, originForLog } from "@/lib/partner-api/service-origins";
import { transitionInstall, type TransitionCause } from "./state";

/**
 * The app sends the operator's browser to reauth_url, a URL from an API answer: only to the
 * service's own origins (REAUTH_URL_ORIGINS), over https (or plain http to a loopback host, for the
 * local sandbox), never `javascript:` and the like. The API client already drops any other
 * reauth_url it receives; this check also covers one stored before, or before a configuration change.
 */
export function isSafeRedirect(url: string): boolean {
  return isServiceUrl(url);
}

/**
 * The operator is leaving for reauth_url (the banner's button): their next visit probes the flag.
 * Returns where to send them, or null when the install is not flagged (any more).
 */
export async function recordReauthRequested(installRowId: string): Promise<string | null> {
  const install = await db().install.findUnique({ where: { id: installRowId }, select: { status: true, reauthUrl: true } });
  if (install?.status !== "NEEDS_REAUTH" || !install.reauthUrl) return null;
  if (!isSafeRedirect(install.reauthUrl)) {
    logger.warn({ installRowId, reauthUrlOrigin: originForLog(install.reauthUrl) }, "stored reauth_url is not the service's; the operator was not sent there");
    return null;
  }
  await db().install.update({ where: { id: installRowId }, data: { reauthRequestedAt: new Date() } });
  return install.reauthUrl;
}

export type ReauthProbeOutcome = "cleared" | "still_flagged" | "not_due" | "unavailable";

/**
 * One API call to see whether the operator has re-consented, made only when it can have changed:
 * once after each time the operator left for reauth_url, or whenever staff ask (`force`). Clears
 * the flag, and records the widened scopes, when the API answers again.
 */
export async function probeReauthorization(installRowId: string, cause: TransitionCause, options: { force?: boolean } = {}): Promise<ReauthProbeOutcome> {
  // Claim the probe (compare-and-set), so simultaneous page loads make one call between them.
  const due = options.force
    ? {}
    : { reauthRequestedAt: { not: null }, OR: [{ lastReconciledAt: null }, { lastReconciledAt: { lt: db().install.fields.reauthRequestedAt } }] };
  const { count } = await db().install.updateMany({
    where: { id: installRowId, status: "NEEDS_REAUTH", ...due },
    data: { lastReconciledAt: new Date() },
  });
  if (count === 0) return "not_due";
  try {
    const consumer = await withAccessToken(installRowId, (token) => fetchConsumer(token), { probeFlagged: true });
    await db().$transaction(async (tx) => {
      const cleared = await transitionInstall(tx, installRowId, "ACTIVE", cause, "the API answers again: the operator re-consented");
      if (cleared) {
        const install = await tx.install.findUniqueOrThrow({ where: { id: installRowId }, select: { grantedScopes: true } });
        // The consumer lists data scopes; keep offline_access, which concerns tokens, if it was granted.
        const scopes = [...new Set([...consumer.scopes, ...install.grantedScopes.filter((s) => s === "offline_access")])];
        await tx.install.update({ where: { id: installRowId }, data: { reauthUrl: null, reauthRequestedAt: null, grantedScopes: scopes } });
      }
    });
    logger.info({ installRowId }, "re-authorization confirmed; the install is active again");
    return "cleared";
  } catch (error) {
    if (error instanceof PartnerApiError && error.kind === "needs_reauth") {
      if (error.detail.reauthUrl) await db().install.update({ where: { id: installRowId }, data: { reauthUrl: error.detail.reauthUrl } });
      return "still_flagged";
    }
    logger.warn({ installRowId, err: error }, "re-authorization probe did not get an answer");
    // Give the claim back, so the operator's next visit tries again.
    await db().install.updateMany({ where: { id: installRowId, status: "NEEDS_REAUTH" }, data: { lastReconciledAt: null } });
    return "unavailable";
  }
}
