// Reads for the operator dashboard. Pages call these; they never query the database or the API
// themselves.
import "server-only";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";
import { withAccessToken } from "@/lib/oauth/access";
import { TokenCircuitOpenError } from "@/lib/oauth/circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "@/lib/oauth/errors";
import { PartnerApiError, fetchChargePoints, type PartnerApiErrorKind } from "@/lib/partner-api/client";
import type { ChargePointPage } from "@/lib/partner-api/schemas";

export type InstallSummary = {
  id: string;
  installId: number | null;
  operatorId: string;
  slug: string | null;
  status: "ACTIVE" | "NEEDS_REAUTH" | "REINSTALL_NEEDED" | "REVOKED";
  grantedScopes: string[];
  reauthUrl: string | null;
  /** Per-install configuration from install.config.updated, as the operator set it. */
  config: unknown;
  createdAt: Date;
  statusChangedAt: Date;
};

export async function fetchInstallSummary(installRowId: string): Promise<InstallSummary | null> {
  return db().install.findUnique({
    where: { id: installRowId },
    select: {
      id: true,
      installId: true,
      operatorId: true,
      slug: true,
      status: true,
      grantedScopes: true,
      reauthUrl: true,
      config: true,
      createdAt: true,
      statusChangedAt: true,
    },
  });
}

export type ChargePointsResult =
  | { ok: true; page: ChargePointPage }
  | { ok: false; reason: PartnerApiErrorKind | NoUsableTokenError["reason"] | "not_active" };

/** One page of the install's charge points, read live from the partner API. */
export async function fetchInstallChargePoints(
  install: Pick<InstallSummary, "id" | "status">,
  page: { page: number; perPage: number },
): Promise<ChargePointsResult> {
  // Only an active install is called: a flagged or revoked one must not be (contract §7).
  if (install.status !== "ACTIVE") return { ok: false, reason: "not_active" };
  try {
    return { ok: true, page: await withAccessToken(install.id, (token) => fetchChargePoints(token, page)) };
  } catch (error) {
    if (error instanceof PartnerApiError) {
      logger.warn({ installRowId: install.id, kind: error.kind, status: error.status }, "charge points unavailable");
      return { ok: false, reason: error.kind };
    }
    if (error instanceof NoUsableTokenError) return { ok: false, reason: error.reason };
    if (error instanceof TokenRefreshUnavailableError || error instanceof TokenCircuitOpenError) {
      logger.warn({ installRowId: install.id, err: error }, "charge points unavailable: no fresh token");
      return { ok: false, reason: "unavailable" };
    }
    throw error;
  }
}
