// Outbound alerts (lib/alerts/, docs/operations.md "Alerts").
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";
import { urlString } from "./formats";

export const alertsShape = {
  /**
   * Where alerts are POSTed (an incident tool, a relay, or a Slack incoming webhook with
   * ALERT_WEBHOOK_FORMAT=slack). Unset: alerts are off, and each one is a log line instead. https in
   * production; plain http only for localhost (the sandbox's alert sink in development and tests).
   */
  ALERT_WEBHOOK_URL: urlString.optional(),
  /**
   * The Standard Webhooks signing secret: `whsec_` and 24 to 64 random bytes in base64 (generate one
   * with `echo "whsec_$(openssl rand -base64 32)"`). Required with ALERT_WEBHOOK_URL.
   */
  ALERT_WEBHOOK_SECRET: z
    .string()
    .refine((value) => {
      const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
      const bytes = match ? Buffer.from(match[1]!, "base64").length : 0;
      return bytes >= 24 && bytes <= 64;
    }, 'must be "whsec_" and 24 to 64 random bytes in base64: generate one with `echo "whsec_$(openssl rand -base64 32)"`')
    .optional(),
  /** standard: the documented JSON alert; slack: `{"text": ...}` for a Slack incoming webhook. */
  ALERT_WEBHOOK_FORMAT: z.enum(["standard", "slack"]).default("standard"),
  /** A sync "keeps failing" after this many failed runs in a row (its retries count): then one sync.failing alert. */
  ALERT_SYNC_FAILURES: z.coerce.number().int().min(1).max(100).default(3),
  /**
   * A storm: more than this many installs entering the same trouble (install.needs_reauth,
   * install.reinstall_needed, sync.failing) within ALERT_DIGEST_WINDOW_SECONDS send one digest alert
   * instead of one alert each (lib/alerts/digest.ts). The first ones are still sent on their own.
   */
  ALERT_DIGEST_THRESHOLD: z.coerce.number().int().min(1).max(100_000).default(20),
  /** The storm's window: from the type's first alert, and for as long as its alerts keep coming this close together. */
  ALERT_DIGEST_WINDOW_SECONDS: z.coerce.number().int().min(10).max(86_400).default(600),
};
