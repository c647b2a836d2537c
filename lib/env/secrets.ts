// The app's keys and accounts: token encryption, the staff console's accounts, the cron routes' secret.
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";
import { parseStaffUsers } from "@/lib/config/staff-users";
import { encryptionKeysSchema } from "./formats";

export const secretsShape = {
  TOKEN_ENCRYPTION_KEYS: encryptionKeysSchema,

  /**
   * The partner's staff who may use the console (/admin): comma-separated `<email>=<password hash>`
   * or `<email>=<password hash>=<role>` (viewer or operator; no role: operator), each entry made with
   * `npm run staff:password`. Empty: no console access. Checked whole at start-up (a bad entry stops
   * the app), and read again on every request (lib/auth/staff.ts).
   */
  STAFF_USERS: z
    .string()
    .default("")
    .superRefine((value, ctx) => {
      try {
        parseStaffUsers(value);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message.replace(/^STAFF_USERS /, "") });
      }
    }),
  /** Bearer secret for /api/cron/* (platform schedulers). Unset: the cron routes answer 503. */
  CRON_SECRET: z.string().min(32, "use at least 32 random characters").optional(),
};
