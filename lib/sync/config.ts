// The per-install configuration the sync honours (contract §6 install.config.updated; its fields are
// not shown: the sandbox's are `siteIds` and `syncCharges`, docs/spec-gaps.md A23). The app stores the
// configuration as the operator sent it (lib/webhooks/handlers/install-config-updated.ts); this is
// the one place that reads it for the sync, tolerantly: a field that is missing or malformed falls
// back to "everything", the behaviour of an install that was never configured.
import "server-only";
import { z } from "zod";
import { IdSchema } from "@/lib/partner-api/schemas";

const SyncConfigSchema = z.object({
  /** false: charges are not synced, and the ones synced before are removed. */
  syncCharges: z.boolean().catch(true).default(true),
  /** The operator's sites the app may keep data of; empty means all sites. */
  siteIds: z.array(IdSchema).catch([]).default([]),
});

export type SyncConfig = { syncCharges: boolean; siteIds: ReadonlySet<string> };

export function readSyncConfig(stored: unknown): SyncConfig {
  const parsed = SyncConfigSchema.safeParse(stored ?? {});
  const config = parsed.success ? parsed.data : { syncCharges: true, siteIds: [] };
  return { syncCharges: config.syncCharges, siteIds: new Set(config.siteIds) };
}

/** Whether a record of this site is kept: every site when none is named; a record without a site only then. */
export function keepsSite(config: SyncConfig, siteId: string | null): boolean {
  if (config.siteIds.size === 0) return true;
  return siteId !== null && config.siteIds.has(siteId);
}
