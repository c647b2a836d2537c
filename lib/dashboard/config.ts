// The per-install configuration as the dashboard uses it (contract §6 install.config.updated; its
// fields are not shown: the sandbox's are `siteIds`, `syncCharges` and `currency`, docs/spec-gaps.md
// A23). The sync applies `siteIds` and `syncCharges` (lib/sync/config.ts): the local copy holds only
// what the operator chose. The dashboard applies `currency` as the reporting currency: amounts the
// service records in it are shown as they are; amounts in another currency are shown in their own,
// never converted, because converting needs a rates source, which is the partner's business (the
// page says so). Read tolerantly: a missing or malformed field falls back to "not chosen".
import "server-only";
import { z } from "zod";
import { readSyncConfig } from "@/lib/sync/config";

const DisplayConfigSchema = z.object({
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional()
    .catch(undefined),
});

export type DashboardConfig = {
  /** ISO 4217 code the operator chose to report in; undefined when none was chosen. */
  currency: string | undefined;
  /** Sites the copy is limited to (empty: all sites). */
  siteIds: readonly string[];
  /** false: the operator chose not to have charges imported; the sessions pages say so. */
  syncCharges: boolean;
};

export function readDashboardConfig(stored: unknown): DashboardConfig {
  const parsed = DisplayConfigSchema.safeParse(stored && typeof stored === "object" ? stored : {});
  const sync = readSyncConfig(stored);
  return { currency: parsed.success ? parsed.data.currency : undefined, siteIds: [...sync.siteIds], syncCharges: sync.syncCharges };
}
