// The per-install configuration an operator edits on the portal's catalogue page (contract §6:
// "install.config.updated — the operator changes the app's per-install configuration"). The contract does
// not show its fields; the sandbox uses a small typed example (README decision 23).
import { z } from "zod";

export const CONFIG_CURRENCIES = ["EUR", "NOK", "SEK", "DKK", "CHF", "GBP"] as const;

export const installConfigSchema = z
  .object({
    /** The operator's sites the app may work with; empty means all sites. */
    siteIds: z
      .array(z.number().int().positive())
      .max(100)
      .refine((ids) => new Set(ids).size === ids.length, "siteIds must not repeat"),
    /** Whether the app should import charge sessions. */
    syncCharges: z.boolean(),
    /** Currency the app should report in. */
    currency: z.enum(CONFIG_CURRENCIES),
  })
  .strict();

export type InstallConfig = z.infer<typeof installConfigSchema>;

/** A partial update (control API): only the given settings change. */
export const installConfigPatchSchema = installConfigSchema.partial().strict();
export type InstallConfigPatch = z.infer<typeof installConfigPatchSchema>;

/** What a new install starts with: all sites, sync on, the operator's own currency when it is one of the list. */
export function defaultInstallConfig(operatorCurrency: string): InstallConfig {
  const currency = CONFIG_CURRENCIES.find((c) => c === operatorCurrency) ?? "EUR";
  return { siteIds: [], syncCharges: true, currency };
}
