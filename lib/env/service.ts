// The service the app is a partner of: its identity provider and its API (contract §5, §9).
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";
import { urlString, oauthIssuerSchema, partnerApiBaseUrlSchema } from "./formats";

export const serviceShape = {
  /** contract §5.8: the issuer address is given to app owners on request. */
  OAUTH_ISSUER: oauthIssuerSchema,
  OAUTH_CLIENT_ID: z.string().min(1),
  OAUTH_CLIENT_SECRET: z.string().min(1),
  /** contract §5.3: registered by exact match; sent unchanged in the token request. */
  OAUTH_REDIRECT_URI: urlString,
  /** The partner API origin; paths are under /api/v1 (contract §9). */
  PARTNER_API_BASE_URL: partnerApiBaseUrlSchema,
};
