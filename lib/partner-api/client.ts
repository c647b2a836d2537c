// A small typed client for the partner API (contract §4.2): one function per operation, every
// answer validated with zod, every failure classified into a PartnerApiError the caller can act on.
import "server-only";
import type { z } from "zod";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";
import {
  ApiErrorBodySchema,
  ChargePageSchema,
  ChargePointPageSchema,
  ConsumerSchema,
  NeedsReauthBodySchema,
  type ChargePage,
  type ChargePointPage,
  type Consumer,
} from "./schemas";
import { isServiceUrl, originForLog } from "./service-origins";

/**
 * What went wrong, in the terms the app acts on (contract §7):
 * - `unauthorized` (401): the access token is expired or the install revoked: refresh, then re-install;
 * - `needs_reauth` (403 NEEDS_REAUTH): stop calling the API for this install, send the operator to reauthUrl;
 * - `forbidden` (any other 403): e.g. a scope that was not granted; never flags the install;
 * - `rate_limited` (429): back off (public-facts.md: use RateLimit-ResetsIn);
 * - `unavailable`: no answer in time, a connection error or a 5xx;
 * - `bad_request` / `not_found`: the app asked for something wrong;
 * - `bad_response`: the answer did not match the schema.
 */
export type PartnerApiErrorKind =
  | "unauthorized"
  | "needs_reauth"
  | "forbidden"
  | "rate_limited"
  | "unavailable"
  | "bad_request"
  | "not_found"
  | "bad_response";

export class PartnerApiError extends Error {
  constructor(
    readonly kind: PartnerApiErrorKind,
    readonly status: number | undefined,
    readonly errorCode: string | undefined,
    readonly detail: {
      reauthUrl?: string;
      installId?: number;
      /** Seconds until the rate window resets, when the API said. */
      resetsInSeconds?: number;
    } = {},
  ) {
    super(`partner API: ${kind}${status ? ` (HTTP ${status}${errorCode ? ` ${errorCode}` : ""})` : ""}`);
    this.name = "PartnerApiError";
  }
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

async function classifyFailure(response: Response): Promise<PartnerApiError> {
  const body = await readJson(response);
  const parsed = ApiErrorBodySchema.safeParse(body);
  const errorCode = parsed.success ? parsed.data.errorCode : undefined;
  const status = response.status;
  if (status === 401) return new PartnerApiError("unauthorized", status, errorCode);
  if (status === 403) {
    // contract §7: NEEDS_REAUTH is told apart from every other 403 by its errorCode and body.
    const reauth = NeedsReauthBodySchema.safeParse(body);
    if (reauth.success) {
      const installId = reauth.data.context?.install_id;
      return new PartnerApiError("needs_reauth", status, "NEEDS_REAUTH", { reauthUrl: acceptReauthUrl(reauth.data.context?.reauth_url, installId), installId });
    }
    return new PartnerApiError("forbidden", status, errorCode);
  }
  if (status === 429) {
    const resetsIn = Number(response.headers.get("RateLimit-ResetsIn"));
    return new PartnerApiError("rate_limited", status, errorCode, Number.isFinite(resetsIn) && resetsIn >= 0 ? { resetsInSeconds: resetsIn } : {});
  }
  if (status === 404) return new PartnerApiError("not_found", status, errorCode);
  if (status >= 500) return new PartnerApiError("unavailable", status, errorCode);
  return new PartnerApiError("bad_request", status, errorCode);
}

/**
 * contract §7: "send the operator to reauth_url". The app will send a browser there, so it keeps the
 * URL only when it is the service's own (lib/partner-api/service-origins.ts); any other is dropped
 * here, at the boundary, and the install is flagged without a link (the operator is told to open
 * the app from the portal). The log names the origin only: the path or query may hold a ticket.
 */
function acceptReauthUrl(reauthUrl: string | undefined, installId: number | undefined): string | undefined {
  if (reauthUrl === undefined || isServiceUrl(reauthUrl)) return reauthUrl;
  logger.warn(
    { installId, reauthUrlOrigin: originForLog(reauthUrl) },
    "NEEDS_REAUTH named a reauth_url outside the service's origins (REAUTH_URL_ORIGINS); the app will not send anyone there",
  );
  return undefined;
}

async function getJson<T extends z.ZodType>(
  accessToken: string,
  path: string,
  query: Record<string, string | number | undefined>,
  schema: T,
): Promise<z.infer<T>> {
  const { PARTNER_API_BASE_URL, HTTP_TIMEOUT_MS } = env();
  const url = new URL(`/api/v1${path}`, PARTNER_API_BASE_URL);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { Authorization: `Bearer ${accessToken}`, Accept: "application/json" },
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
      cache: "no-store",
    });
  } catch (error) {
    logger.warn({ path, err: error }, "partner API unreachable");
    throw new PartnerApiError("unavailable", undefined, undefined);
  }
  if (response.headers.get("Deprecation") === "true") {
    // public-facts.md "Versioning": deprecated versions say so; make it visible to the partner.
    logger.warn({ path, sunset: response.headers.get("Sunset") }, "partner API version is deprecated");
  }
  if (!response.ok) throw await classifyFailure(response);
  const parsed = schema.safeParse(await readJson(response));
  if (!parsed.success) {
    logger.warn({ path, issues: parsed.error.issues.slice(0, 5) }, "partner API answer did not match the schema");
    throw new PartnerApiError("bad_response", response.status, undefined);
  }
  return parsed.data;
}

/** `GET /consumers/me`: who the token belongs to (public-facts.md; needs no scope). */
export function fetchConsumer(accessToken: string): Promise<Consumer> {
  return getJson(accessToken, "/consumers/me", {}, ConsumerSchema);
}

/** `GET /charge-points` with `page` (from 0) and `perPage` (1 to 100, public-facts.md). */
export function fetchChargePoints(accessToken: string, page: { page: number; perPage: number }): Promise<ChargePointPage> {
  return getJson(accessToken, "/charge-points", page, ChargePointPageSchema);
}

/** `GET /charges` (scope charge-transactions:read, public-facts.md), one page. */
export function fetchCharges(accessToken: string, page: { page: number; perPage: number }): Promise<ChargePage> {
  return getJson(accessToken, "/charges", page, ChargePageSchema);
}
