// Re-authorization (contract §3, §5.9, §7): when the app owner widens the app's scopes, every
// install is flagged, and every API call for it answers 403 NEEDS_REAUTH with a reauth_url. The
// app then stops calling the API for that install (pages, jobs, sync) and shows the operator a
// banner with a button to reauth_url, until the operator has re-consented.
//
// How the flag clears: the app cannot be told (no webhook is stated for it), so it asks, with one
// `GET /consumers/me`, only when the answer can have changed and someone may care:
//   - the operator left for reauth_url through the banner's button: their next visit probes;
//   - the operator opens the app: at most once per visitProbeInterval (every minute while the flag
//     is younger than an hour, when a re-consent is most likely, then every 10 minutes), because
//     they may have re-consented from the portal or a support link without the app's button;
//   - the operator arrives from one of the service's pages (the way back from reauth_url lands on
//     /dashboard with no marker but the browser's Referer): as if they had said "I've already
//     approved it" (A131);
//   - the operator says "I've already approved it" on the banner, or staff select "Check now": at
//     once (at most once per REAUTH_ASKED_PROBE_INTERVAL_MS for the operator's button);
//   - nobody looks: the reconcile sweep probes at most once per REAUTH_SWEEP_PROBE_INTERVAL_MS, so
//     an install re-consented elsewhere does not stay stopped for ever.
// That is a handful of calls a day for a flagged install, against a budget of 1,000 a minute
// (contract §8): "stop calling the API" in the sense that matters (no data reads, no sync), while
// never leaving an install stuck. docs/spec-gaps.md (A24) records this reading. Settling a refresh
// whose outcome is unknown also probes the old token once (lib/oauth/refresh.ts), because
// keep-alive refreshes flagged installs too.
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

/**
 * The operator says they re-consented somewhere the app could not see (the banner's "I've already
 * approved it"): counts as a departure for reauth_url that has come back, so the probe below is due
 * at once; at most once per REAUTH_ASKED_PROBE_INTERVAL_MS, so a button held down costs nothing.
 */
export async function checkReauthorizationNow(installRowId: string): Promise<ReauthProbeOutcome> {
  const now = new Date();
  await db().install.updateMany({
    where: {
      id: installRowId,
      status: "NEEDS_REAUTH",
      OR: [{ reauthRequestedAt: null }, { reauthRequestedAt: { lt: new Date(now.getTime() - REAUTH_ASKED_PROBE_INTERVAL_MS) } }],
    },
    data: { reauthRequestedAt: now },
  });
  return probeReauthorization(installRowId, "api");
}

export type ReauthProbeOutcome = "cleared" | "still_flagged" | "not_due" | "unavailable";

/** An operator's visit probes a flagged install at most this often (see the top of this file). */
export const REAUTH_VISIT_PROBE_INTERVAL_MS = 10 * 60 * 1000;
/** The operator's "I've already approved it" button probes at most this often. */
export const REAUTH_ASKED_PROBE_INTERVAL_MS = 30 * 1000;
/** While the flag is younger than this, a visit probes at most every REAUTH_YOUNG_VISIT_PROBE_INTERVAL_MS. */
export const REAUTH_YOUNG_FLAG_MS = 60 * 60 * 1000;
export const REAUTH_YOUNG_VISIT_PROBE_INTERVAL_MS = 60 * 1000;

/**
 * How long a visit waits between probes of a flagged install. The operator most often re-consents
 * soon after the flag (the app owner just widened the scopes and told them, or the banner did), so a
 * young flag is probed every minute: at most 60 calls in its first hour, only while someone keeps
 * visiting, against a budget of 1,000 a minute (contract §8). After that, every 10 minutes (A24, A131).
 */
export function visitProbeInterval(flaggedAt: Date, now = new Date()): number {
  return now.getTime() - flaggedAt.getTime() < REAUTH_YOUNG_FLAG_MS ? REAUTH_YOUNG_VISIT_PROBE_INTERVAL_MS : REAUTH_VISIT_PROBE_INTERVAL_MS;
}

/** The reconcile sweep probes a flagged install nobody visits at most this often. */
export const REAUTH_SWEEP_PROBE_INTERVAL_MS = 6 * 60 * 60 * 1000;

/**
 * One API call to see whether the operator has re-consented. Without `force`, it is made only when
 * it is due: after the operator left for reauth_url through the banner's button and has not been
 * probed since, or when the last probe (or the flag itself) is older than `minIntervalMs`. Staff
 * pass `force`. Clears the flag, and records the widened scopes, when the API answers again.
 * `lastReconciledAt` is the time of the install's last look at the API, the flag included.
 */
export async function probeReauthorization(
  installRowId: string,
  cause: TransitionCause,
  options: { force?: boolean; minIntervalMs?: number } = {},
): Promise<ReauthProbeOutcome> {
  // Claim the probe (compare-and-set), so simultaneous page loads make one call between them.
  const due = options.force
    ? {}
    : {
        OR: [
          { lastReconciledAt: null },
          { reauthRequestedAt: { not: null }, lastReconciledAt: { lt: db().install.fields.reauthRequestedAt } },
          ...(options.minIntervalMs === undefined ? [] : [{ lastReconciledAt: { lt: new Date(Date.now() - options.minIntervalMs) } }]),
        ],
      };
  const { count } = await db().install.updateMany({
    where: { id: installRowId, status: "NEEDS_REAUTH", ...due },
    data: { lastReconciledAt: new Date() },
  });
  if (count === 0) return "not_due";
  try {
    const consumer = await withAccessToken(installRowId, (token, call) => fetchConsumer(token, call), { probeFlagged: true, priority: cause === "reconcile" ? "background" : "interactive" });
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
