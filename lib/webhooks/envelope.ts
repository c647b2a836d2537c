// The webhook envelope. The contract names the events and their stated content but not the
// envelope's layout (contract §6 "envelope field layout: not shown"); this is the layout the app
// expects, recorded in docs/spec-gaps.md. It is parsed only after the signature check passed.
import { z } from "zod";

/** Seconds since the epoch; a value in milliseconds is accepted too (tolerant parsing). */
const EpochSchema = z
  .union([z.number(), z.string().regex(/^\d{1,16}$/).transform(Number)])
  .pipe(z.number().int().positive())
  .transform((n) => new Date(n > 1e11 ? n : n * 1000))
  .refine((date) => !Number.isNaN(date.getTime()), "delivered_at is not a time");

export const WebhookEnvelopeSchema = z.object({
  /** A delivery id: the dedupe key when present. */
  id: z.string().min(1).max(200).optional(),
  type: z.string().min(1).max(100),
  /** contract §6.4: signed (it is inside the body), checked against a tolerance window. */
  delivered_at: EpochSchema,
  data: z.record(z.string(), z.unknown()).default({}),
});

export type WebhookEnvelope = z.infer<typeof WebhookEnvelopeSchema>;

/**
 * install_id is "integer" in the contract (§2) with no stated range; the app stores it in a
 * PostgreSQL integer (docs/spec-gaps.md A22), so a larger value is refused as invalid, not a 500.
 */
export const InstallIdSchema = z.number().int().positive().max(2_147_483_647);

/** contract §6: install.created carries install_id, operator_id and slug. */
export const InstallCreatedDataSchema = z.object({
  install_id: InstallIdSchema,
  operator_id: z.union([z.number().int(), z.string().min(1)]).transform((v) => String(v)),
  slug: z.string().max(200).optional(),
});
