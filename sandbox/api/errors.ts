// Partner API errors, in the service's body shape (public-facts.md "Errors"):
// { "status": "FORBIDDEN", "errorCode": "ACCESS_FORBIDDEN", "message": "...", "context": {...} }.
import type { ContentfulStatusCode } from "hono/utils/http-status";

export interface ApiErrorBody {
  status: string;
  errorCode: string;
  message: string;
  context: Record<string, string | number | boolean | null>;
}

export class ApiError extends Error {
  constructor(
    readonly httpStatus: ContentfulStatusCode,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
}

export const apiErrors = {
  invalidAccessToken: () =>
    new ApiError(401, { status: "UNAUTHORIZED", errorCode: "INVALID_ACCESS_TOKEN", message: "Invalid or expired accessToken", context: {} }),
  consumerNotFound: () =>
    new ApiError(401, { status: "UNAUTHORIZED", errorCode: "CONSUMER_NOT_FOUND", message: "Consumer not found or disabled", context: {} }),
  needsReauth: (installId: number, appName: string, reauthUrl: string) =>
    new ApiError(403, {
      status: "FORBIDDEN",
      errorCode: "NEEDS_REAUTH",
      message: `Install ${installId} of ${appName} must be re-authorized by the operator: the app's scopes were widened.`,
      context: { install_id: installId, reauth_url: reauthUrl },
    }),
  accessForbidden: (requiredScope: string) =>
    new ApiError(403, {
      status: "FORBIDDEN",
      errorCode: "ACCESS_FORBIDDEN",
      message: `Access forbidden: this operation needs the scope ${requiredScope}`,
      context: { requiredScope },
    }),
  badRequest: (message: string, field: string) =>
    new ApiError(400, { status: "BAD_REQUEST", errorCode: "BAD_REQUEST", message, context: { field } }),
  /** A record the caller's operator does not list (another operator's is the same answer: nothing is revealed). */
  recordNotFound: (kind: string, id: string | number) =>
    new ApiError(404, { status: "NOT_FOUND", errorCode: "RESOURCE_NOT_FOUND", message: `No ${kind} ${id} for this operator`, context: { resource: kind } }),
  /**
   * README decision 47: a beta operation not enabled for the caller's operator account (contract §4.3: "off by default,
   * enabled per operator account on request"). A 403 with its own errorCode, apart from ACCESS_FORBIDDEN (a scope).
   */
  featureNotEnabled: (feature: string) =>
    new ApiError(403, {
      status: "FORBIDDEN",
      errorCode: "FEATURE_NOT_ENABLED",
      message: `The ${feature} (beta) is not enabled for this operator account. The operator can ask for it through their business partner contact.`,
      context: { feature },
    }),
  notFound: (path: string) =>
    new ApiError(404, { status: "NOT_FOUND", errorCode: "RESOURCE_NOT_FOUND", message: `No resource at ${path}`, context: {} }),
  /** `resetsIn` null: a 429 that says nothing about when to come back (an injected fault with resetsIn "omit"). */
  rateLimited: (resetsIn: number | null) =>
    new ApiError(429, {
      status: "TOO_MANY_REQUESTS",
      errorCode: "RATE_LIMIT_EXCEEDED",
      message: "Rate limit exceeded",
      context: resetsIn === null ? {} : { resetsInSeconds: resetsIn },
    }),
  // The service's 5xx bodies are not shown (contract §7); these follow the shape of the documented ones (README
  // decision 37) and are what the API-fault modes error500 / error503 answer.
  internalError: () =>
    new ApiError(500, {
      status: "INTERNAL_SERVER_ERROR",
      errorCode: "INTERNAL_SERVER_ERROR",
      message: "An unexpected error occurred. Please try again later.",
      context: {},
    }),
  serviceUnavailable: () =>
    new ApiError(503, {
      status: "SERVICE_UNAVAILABLE",
      errorCode: "SERVICE_UNAVAILABLE",
      message: "The service is temporarily unavailable. Please try again later.",
      context: {},
    }),
};
