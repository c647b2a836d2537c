// zod schemas for the partner API's answers. The contract does not show payload shapes
// (contract §4.2 "Payload shape: not shown"), so these follow public-facts.md and stay tolerant:
// unknown fields are dropped, optional ones may be missing, and ids may come as numbers or strings.
import { z } from "zod";

/** int64 ids arrive as JSON numbers; keep them as strings so no precision is ever lost. */
export const IdSchema = z.union([z.number().int(), z.string().min(1)]).transform((v) => String(v));

export const ConsumerSchema = z.object({
  name: z.string().optional(),
  operatorId: IdSchema,
  clientId: z.string().optional(),
  scopes: z.array(z.string()).default([]),
  rateLimit: z.number().optional(),
  rateLimitIntervalInSeconds: z.number().optional(),
  createdAt: z.string().optional(),
  // Not documented (public-facts.md): read it when present, see lib/installs/identity.ts.
  installId: z.number().int().positive().max(2_147_483_647).optional(),
  // Not documented either: the operator's own name (`name` is the consumer's, which may or may not be
  // the operator's: public-facts.md). A value that is not a sensible name is ignored, not an error.
  operatorName: z.string().trim().min(1).max(200).optional().catch(undefined),
});
export type Consumer = z.infer<typeof ConsumerSchema>;

export const ListMetaSchema = z.object({
  currentPage: z.number().int().min(0),
  perPage: z.number().int().min(1),
  itemCount: z.number().int().min(0).optional(),
  totalPageCount: z.number().int().min(0),
  totalItemCount: z.number().int().min(0),
});

export function listEnvelopeSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: ListMetaSchema });
}

/** Any list, its records left as the service sent them (objects), for the sync to map and keep whole. */
export const RawListPageSchema = listEnvelopeSchema(z.record(z.string(), z.unknown()));
export type RawListPage = z.infer<typeof RawListPageSchema>;

export const ChargePointSchema = z.object({
  id: IdSchema,
  name: z.string().nullish(),
  serialNumber: z.string().nullish(),
  evseId: z.string().nullish(),
  state: z.string().nullish(),
  type: z.string().nullish(),
  maxKw: z.number().nullish(),
  isActive: z.boolean().nullish(),
  location: z
    .object({
      addressLabel: z.string().nullish(),
      address: z.object({ city: z.string().nullish(), country: z.string().nullish() }).partial().nullish(),
    })
    .partial()
    .nullish(),
  connectors: z.array(z.object({ id: IdSchema.optional(), name: z.string().nullish() }).partial()).nullish(),
  lastConnectedAt: z.string().nullish(),
});
export type ChargePoint = z.infer<typeof ChargePointSchema>;

export const ChargePointPageSchema = listEnvelopeSchema(ChargePointSchema);
export type ChargePointPage = z.infer<typeof ChargePointPageSchema>;

/** public-facts.md "Errors": `{ status, errorCode, message, context }`. */
export const ApiErrorBodySchema = z.object({
  status: z.string().optional(),
  errorCode: z.string().optional(),
  message: z.string().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
});

/**
 * contract §7 "NEEDS_REAUTH body". The errorCode alone decides (the contract says to handle it
 * apart from every other 403); the context fields are read when they are usable.
 */
export const NeedsReauthBodySchema = z.object({
  errorCode: z.literal("NEEDS_REAUTH"),
  message: z.string().optional(),
  context: z
    .object({
      install_id: z.number().int().positive().optional().catch(undefined),
      reauth_url: z.url({ protocol: /^https?$/ }).optional().catch(undefined),
    })
    .optional()
    .catch(undefined),
});

/** public-facts.md "Charge"; listing charges is what `charge-transactions:read` grants. */
export const ChargeSchema = z.object({
  id: IdSchema,
  chargePointId: IdSchema.nullish(),
  state: z.string().nullish(),
  type: z.string().nullish(),
  consumedKwh: z.number().nullish(),
  startedAt: z.string().nullish(),
  stoppedAt: z.string().nullish(),
  cost: z.number().nullish(),
  currency: z.object({ identifier: z.string().nullish(), decimals: z.number().int().nullish() }).partial().nullish(),
});
export type Charge = z.infer<typeof ChargeSchema>;

export const ChargePageSchema = listEnvelopeSchema(ChargeSchema);
export type ChargePage = z.infer<typeof ChargePageSchema>;

/** public-facts.md "Team": what the rename answers (lib/partner-api/client.ts renameTeam). */
export const TeamSchema = z
  .object({
    // Not IdSchema: the record is kept exactly as the service sent it (synced_teams.raw, as the sync
    // keeps it), so the next sync pass sees no difference.
    id: z.union([z.number().int(), z.string().min(1)]),
    name: z.string().nullish(),
    type: z.string().nullish(),
    updatedAt: z.string().nullish(),
  })
  .loose();
export type Team = z.infer<typeof TeamSchema>;

/** Any JSON answer, read further by its caller (the beta EVSE charge history: lib/dashboard/energy.ts). */
export const AnyJsonSchema = z.unknown();
