// Where the app sends operators on the service's side: the portal and the re-authorization pages (contract §7).
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { urlString, OriginListSchema } from "./formats";

export const serviceLinksShape = {
  /** Where operators install the app (the service's operator portal). Shown as a link only. */
  OPERATOR_PORTAL_URL: urlString.optional(),
  /**
   * contract §7: where the app may send an operator to re-authorize (reauth_url from an API answer):
   * the service's origins, comma-separated. Unset: the origins of OPERATOR_PORTAL_URL, OAUTH_ISSUER
   * and PARTNER_API_BASE_URL (lib/partner-api/service-origins.ts).
   */
  REAUTH_URL_ORIGINS: OriginListSchema.optional(),
};
