// The sync of each operator's data (lib/sync/, docs/data-retention.md).
//
// One concern's part of the configuration schema; lib/env.ts merges every part into the one schema
// validated at start-up, so each variable is still checked, and reported, in one place.
import "server-only";
import { z } from "zod";

export const syncShape = {
  /** Records per page when the sync walks a list (public-facts.md: perPage 1 to 100). */
  SYNC_PAGE_SIZE: z.coerce.number().int().min(1).max(100).default(100),
  /**
   * An incremental pass finds new records only (docs/spec-gaps.md, lib/sync/strategy.ts); a full pass
   * at least this often picks up changes to older records and marks deleted ones.
   */
  SYNC_FULL_PASS_INTERVAL_HOURS: z.coerce.number().min(0).max(24 * 30).default(24),
  /** How often each active install is synced (the scheduled fan-out runs every 5 minutes; lib/jobs/kinds.ts). */
  SYNC_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(24 * 60).default(15),
  /** Days an uninstalled operator's synced data is kept before it is deleted; 0 = at once. */
  SYNC_RETENTION_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
};
