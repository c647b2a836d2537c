// Reads for the operator dashboard. Pages call these; they never query the database or the API
// themselves.
import "server-only";
import { cache } from "react";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";
import { withAccessToken } from "@/lib/oauth/access";
import { TokenCircuitOpenError } from "@/lib/oauth/circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "@/lib/oauth/errors";
import { isServiceUrl } from "@/lib/partner-api/service-origins";
import { reconcileOnVisit } from "./reconcile";
import { REFRESH_ANSWER_LOST } from "./state";
import { sharedRead } from "@/lib/partner-api/shared-read";
import { dataPurgeDate } from "@/lib/sync/retention";
import { PartnerApiError, fetchChargePoints, fetchCharges, type ApiCall, type PartnerApiErrorKind } from "@/lib/partner-api/client";
import type { ChargePage, ChargePointPage } from "@/lib/partner-api/schemas";

export type InstallSummary = {
  id: string;
  installId: number | null;
  operatorId: string;
  slug: string | null;
  /** The operator's name, when the service stated one; else null (show "Operator <id>"). */
  operatorName: string | null;
  status: "ACTIVE" | "NEEDS_REAUTH" | "REINSTALL_NEEDED" | "REVOKED";
  grantedScopes: string[];
  reauthUrl: string | null;
  /** Per-install configuration from install.config.updated, as the operator set it. */
  config: unknown;
  /** The signed delivered_at of that configuration; null when none was ever received (A210). */
  configUpdatedAt: Date | null;
  createdAt: Date;
  statusChangedAt: Date;
  /** When the app last checked the install against the API (reconcile or re-authorization probe). */
  lastReconciledAt: Date | null;
  /**
   * Who or what moved a lost install (REINSTALL_NEEDED) there: "staff" when the partner's staff
   * marked it for re-install (lib/admin/actions.ts), else the refresh or API failure that did. Null
   * for other states.
   */
  statusCause?: string | null;
  /**
   * A lost install (REINSTALL_NEEDED) whose refresh's answer never reached the app
   * (lib/oauth/refresh.ts, rule 3): the operator is told that story, not a plain refusal.
   */
  refreshAnswerLost?: boolean;
  /**
   * An ACTIVE install serving on its last access token after a refresh answer was lost where nothing
   * proves it never happened (lib/oauth/refresh.ts, rule 3): when that token expires, so the operator
   * reconnects from the portal before then. Null otherwise.
   */
  reconnectBy?: Date | null;
  /** A lost install (REINSTALL_NEEDED): when its synced data is deleted unless it is reconnected (A209). */
  dataDeletedOn?: Date | null;
};

/**
 * Whether the dashboard shows the install's local copy (lib/sync). ACTIVE: yes, and it keeps moving.
 * NEEDS_REAUTH: yes, read-only. Contract §7 says to stop calling the API for the install, which the
 * app does (no sync, no live read, no write), but the copy it already holds is the operator's own
 * data, and the banner promises it is kept: hiding it would punish the operator for the app owner's
 * change (A132). A lost install (REINSTALL_NEEDED) or a revoked one shows nothing: the app has no
 * working grant, and a revoked install's operator withdrew consent (app/dashboard/layout.tsx).
 */
export function showsLocalCopy(status: InstallSummary["status"]): boolean {
  return status === "ACTIVE" || status === "NEEDS_REAUTH";
}

/**
 * The install as a dashboard request sees it: reconciled with the API first when due
 * (lib/installs/reconcile.ts), then read. `cache` makes the layout and the page of one request
 * share one call, so the page never renders a state the layout has just changed.
 *
 * One query on the common path: the summary itself says whether a check is due, and is read again
 * only after a check ran (it may have changed the state). Every statement before a page's first
 * API call delays that call, and under load each one waits its turn behind every other request's.
 */
export const loadDashboardInstall = cache(async (installRowId: string): Promise<InstallSummary | null> => {
  const install = await fetchInstallSummary(installRowId);
  if (!install) return null;
  // Webhooks may be lost (contract §6): check the install against the API now and then on a visit.
  const checked = await reconcileOnVisit(install, { fromService: await visitFromService() });
  return checked ? fetchInstallSummary(installRowId) : install;
});

/**
 * Whether this page load comes straight from one of the service's own pages: the browser's Referer
 * (the origin only, by the default referrer policy) is a service origin (REAUTH_URL_ORIGINS). That is
 * how the operator arrives after approving at reauth_url (docs/flow.md section 4: the service sends
 * them back to /dashboard, with no code and no marker). A hint, not a proof: anyone can send any
 * Referer, and all it can do is make the re-consent probe due sooner, still at most once per
 * REAUTH_ASKED_PROBE_INTERVAL_MS (lib/installs/reauth.ts), so it costs nothing a stranger could use.
 */
async function visitFromService(): Promise<boolean> {
  // Loaded here, not at the top: this module also runs outside Next.js (jobs, the test worker).
  const { headers } = await import("next/headers");
  const referer = (await headers()).get("referer");
  return referer !== null && referer.length <= 2048 && isServiceUrl(referer);
}

export async function fetchInstallSummary(installRowId: string): Promise<InstallSummary | null> {
  const install = await db().install.findUnique({
    where: { id: installRowId },
    select: {
      id: true,
      installId: true,
      operatorId: true,
      slug: true,
      operatorName: true,
      status: true,
      grantedScopes: true,
      reauthUrl: true,
      config: true,
      configUpdatedAt: true,
      createdAt: true,
      statusChangedAt: true,
      lastReconciledAt: true,
      grant: { select: { refreshAnswerLostAt: true, accessTokenExpiresAt: true } },
    },
  });
  if (!install) return null;
  const { grant, ...summary } = install;
  if (summary.status === "ACTIVE") return { ...summary, reconnectBy: grant?.refreshAnswerLostAt ? grant.accessTokenExpiresAt : null };
  if (summary.status !== "REINSTALL_NEEDED") return summary;
  // Only a lost install says why (on install_events_install_row_id_occurred_at_idx).
  const last = await db().installEvent.findFirst({
    where: { installRowId, toStatus: "REINSTALL_NEEDED" },
    orderBy: { occurredAt: "desc" },
    select: { cause: true, detail: true },
  });
  const refreshAnswerLost = last?.cause === "refresh" && (last.detail ?? "").startsWith(REFRESH_ANSWER_LOST);
  return { ...summary, statusCause: last?.cause ?? null, refreshAnswerLost, dataDeletedOn: dataPurgeDate(summary) };
}

/** A read for the dashboard: the data, or why there is none (each reason has its own text). */
export type DashboardRead<T> =
  | { ok: true; data: T }
  | {
      ok: false;
      reason: PartnerApiErrorKind | NoUsableTokenError["reason"] | "not_active" | "not_granted";
      /** rate_limited: when the install's budget (or the service) allows the next request. */
      retryInSeconds?: number;
    };

/**
 * Runs one API read for the install. Only an active install is called: a flagged, broken or
 * revoked one is not (contract §7). A feature whose scope was not granted says so instead of
 * calling the API to fail (contract §2: apps request, and operators grant, the narrowest scopes).
 */
async function readForInstall<T>(
  install: Pick<InstallSummary, "id" | "status" | "grantedScopes">,
  requiredScope: string,
  /** The operation and its parameters: identical reads in flight share one request (shared-read.ts). */
  readKey: string,
  call: (accessToken: string, apiCall: ApiCall) => Promise<T>,
): Promise<DashboardRead<T>> {
  if (install.status !== "ACTIVE") return { ok: false, reason: "not_active" };
  if (!install.grantedScopes.includes(requiredScope)) return { ok: false, reason: "not_granted" };
  try {
    return { ok: true, data: await sharedRead(`${install.id} ${readKey}`, () => withAccessToken(install.id, call)) };
  } catch (error) {
    await restartIfInstallLeftActive(install.id);
    if (error instanceof PartnerApiError) {
      logger.warn({ installRowId: install.id, kind: error.kind, status: error.status }, "dashboard read failed");
      // A plain 403 here means the scope is missing at the service (never NEEDS_REAUTH, which
      // withAccessToken has already turned into a flag).
      if (error.kind === "rate_limited") return { ok: false, reason: "rate_limited", retryInSeconds: error.detail.resetsInSeconds };
      return { ok: false, reason: error.kind === "forbidden" ? "not_granted" : error.kind };
    }
    if (error instanceof NoUsableTokenError) return { ok: false, reason: error.reason };
    if (error instanceof TokenRefreshUnavailableError || error instanceof TokenCircuitOpenError) {
      logger.warn({ installRowId: install.id, err: error }, "dashboard read failed: no fresh token");
      return { ok: false, reason: "unavailable" };
    }
    throw error;
  }
}

/**
 * The status shown anywhere on a page agrees with the state the page acted on. The layout renders
 * the install panel from the state it read when the request began; a page's live read can change
 * that state mid-request (the API answers NEEDS_REAUTH and withAccessToken flags the install, a
 * refresh finds the chain revoked, the install was uninstalled). Layout and page render in
 * parallel, so the panel cannot wait for the page: instead, when a failed read leaves the install
 * no longer ACTIVE, the render starts over, and the new one reads the new state everywhere (the
 * layout then shows what happened instead of the page). It cannot loop: the second render's
 * install is not ACTIVE, so no page calls the API (readForInstall's first line).
 *
 * Any dashboard code that calls the API while rendering (not only readForInstall) calls this after
 * a failed call. Always to /dashboard: the Overview shows any state's panel (and, while
 * re-authorization is pending, the copy read-only), and a server component is not told its own path.
 */
export async function restartIfInstallLeftActive(installRowId: string): Promise<void> {
  let current;
  try {
    current = await db().install.findUnique({ where: { id: installRowId }, select: { status: true } });
  } catch (error) {
    // The database is away: the page explains its own failed read; nothing to restart for.
    logger.warn({ installRowId, err: error }, "could not re-read the install's state after a failed dashboard read");
    return;
  }
  if (current && current.status !== "ACTIVE") {
    logger.info({ installRowId, status: current.status }, "the install's state changed during a dashboard render; rendering again");
    // Loaded here, not at the top: this module's reads also run outside Next.js (jobs, the test
    // worker), where next/navigation cannot load; only a page render ever gets this far.
    const { redirect } = await import("next/navigation");
    redirect("/dashboard");
  }
}

/** One page of the install's charge points, read live from the partner API. */
export function fetchInstallChargePoints(install: InstallSummary, page: { page: number; perPage: number }): Promise<DashboardRead<ChargePointPage>> {
  return readForInstall(install, "charge-points:read", `charge-points ${page.page} ${page.perPage}`, (token, call) => fetchChargePoints(token, call, page));
}

/** The install's charging sessions, the first page as the API lists them, read live. */
export function fetchInstallCharges(install: InstallSummary, perPage: number): Promise<DashboardRead<ChargePage>> {
  return readForInstall(install, "charge-transactions:read", `charges 0 ${perPage}`, (token, call) => fetchCharges(token, call, { page: 0, perPage }));
}
