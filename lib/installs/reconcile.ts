// Reconcile: the API is the source of truth, webhooks only an accelerator (contract §6: delivery is
// best effort and never retried). Reconciling an install asks the API about it with its token:
//   - the call works: the install is live; learn its install_id if the app did not know it yet;
//   - 403 NEEDS_REAUTH: flag it (contract §7) and stop calling the API for it;
//   - 401 and a failed refresh: lib/oauth/access.ts has already moved it out of ACTIVE. The API cannot
//     tell an uninstall whose install.revoked was lost from a lost chain (contract §7), so the install
//     becomes REINSTALL_NEEDED, its data purged after the retention period unless reconnected (A209);
//   - a lost install.config.updated cannot be read back (no such API, A210): nothing to do here;
//   - no answer: nothing is concluded; the next round tries again.
// Only ACTIVE installs are probed here: revoked ones are final, and flagged or broken ones wait
// for the operator (re-consent, re-install), not for the app.
import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";
import { withAccessToken } from "@/lib/oauth/access";
import { TokenCircuitOpenError } from "@/lib/oauth/circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "@/lib/oauth/errors";
import { resizeBudget, type Priority } from "@/lib/partner-api/budget";
import { PartnerApiError, fetchConsumer } from "@/lib/partner-api/client";
import { checkReauthorizationNow, probeReauthorization, visitProbeInterval } from "./reauth";
import { flagNeedsReauth } from "./state";

export type ReconcileOutcome = "live" | "flagged" | "unusable" | "unavailable" | "skipped";

/**
 * `priority`: "interactive" when an operator's page waits for the answer, "background" for the
 * sweep and webhook follow-ups (lib/partner-api/budget.ts).
 */
export async function reconcileInstall(installRowId: string, priority: Priority = "background"): Promise<ReconcileOutcome> {
  const install = await db().install.findUnique({ where: { id: installRowId }, select: { status: true, installId: true } });
  if (!install || install.status !== "ACTIVE") return "skipped";
  let outcome: ReconcileOutcome;
  try {
    const consumer = await withAccessToken(installRowId, (token, call) => fetchConsumer(token, call), { priority });
    if (consumer.rateLimit !== undefined && consumer.rateLimitIntervalInSeconds !== undefined) {
      // contract §8: the install's own budget, as the service states it.
      await resizeBudget(installRowId, consumer.rateLimit, consumer.rateLimitIntervalInSeconds);
    }
    if (install.installId === null && consumer.installId !== undefined) {
      await db().install.updateMany({ where: { id: installRowId, installId: null }, data: { installId: consumer.installId } });
    }
    outcome = "live";
  } catch (error) {
    if (error instanceof PartnerApiError && error.kind === "needs_reauth") {
      await flagNeedsReauth(installRowId, error.detail.reauthUrl ?? null, "reconcile");
      outcome = "flagged";
    } else if (error instanceof NoUsableTokenError) {
      outcome = "unusable";
    } else if (error instanceof PartnerApiError || error instanceof TokenRefreshUnavailableError || error instanceof TokenCircuitOpenError) {
      outcome = "unavailable";
    } else {
      throw error;
    }
  }
  if (outcome !== "unavailable") {
    await db().install.update({ where: { id: installRowId }, data: { lastReconciledAt: new Date() } });
  }
  logger.info({ installRowId, outcome }, "install reconciled");
  return outcome;
}

/**
 * How stale an install's last check may be before a dashboard visit checks it again. A minute: the
 * service can flag an install at any moment (contract §3) and says so only in its API answers, so
 * a page that says "Connected" (and the sections that point at a banner) is at most a minute behind
 * while someone is looking; one GET /consumers/me a minute per visited install, against a budget
 * of 1,000 a minute (contract §8). Nobody visiting costs nothing here (A131).
 */
export const VISIT_RECONCILE_INTERVAL_MS = 60 * 1000;

/**
 * Reconcile on a dashboard visit, at most once per interval per install (the check is recorded in
 * the database, so it holds across instances and page views do not spend the rate budget). For a
 * flagged install, the visit is the operator coming back, perhaps from re-consenting: probe it when
 * due (lib/installs/reauth.ts), at once (throttled) when they come straight from the service's own
 * page (`fromService`). `install` is the visit's own reading of the install; true when a check ran
 * (the install's state may have changed since that reading).
 */
export async function reconcileOnVisit(
  install: { id: string; status: string; lastReconciledAt: Date | null; statusChangedAt: Date },
  options: { fromService?: boolean } = {},
): Promise<boolean> {
  if (install.status === "NEEDS_REAUTH") {
    // Back from the service's page, most likely from approving at reauth_url (docs/flow.md section 4).
    if (options.fromService) return (await checkReauthorizationNow(install.id)) !== "not_due";
    // The operator may have re-consented anywhere (the banner's button, the portal, a support link).
    return (await probeReauthorization(install.id, "api", { minIntervalMs: visitProbeInterval(install.statusChangedAt) })) !== "not_due";
  }
  const cutoff = new Date(Date.now() - VISIT_RECONCILE_INTERVAL_MS);
  // Not due by the visit's own reading: nothing to claim (the common case, no statement at all).
  if (install.status !== "ACTIVE" || (install.lastReconciledAt !== null && install.lastReconciledAt >= cutoff)) return false;
  // Claim the check first (compare-and-set), so simultaneous visits make one call between them.
  const { count } = await db().install.updateMany({
    where: { id: install.id, status: "ACTIVE", OR: [{ lastReconciledAt: null }, { lastReconciledAt: { lt: cutoff } }] },
    data: { lastReconciledAt: new Date() },
  });
  if (count === 1) await reconcileInstall(install.id, "interactive");
  return count === 1;
}
