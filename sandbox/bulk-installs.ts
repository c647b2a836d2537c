// POST /_sandbox/bulk-installs (README decision 41): thousands of operators, each with an active install of the app,
// in one call, as if each had gone through Connect → Approve → the code exchange. A test fixture for scale tests
// (keep-alive over 10,000 installs, a sync fanned out over many): the real service has no such call.
//
// The tokens are real: minted exactly as the token endpoint mints them (idp/tokens.ts), one chain per install, with
// the usual lifetimes, so the token endpoint refreshes them and the API accepts them. They appear in the response
// only because this is a test fixture answering on loopback (request-guard.ts); nothing else ever returns a token
// outside the token endpoint, and the state keeps only their sha256.
import { z } from "zod";
import { requestedScopes } from "./app-registration.js";
import { OFFLINE_ACCESS, SCOPE_PATTERN } from "./config.js";
import type { SandboxContext } from "./context.js";
import { randomString } from "./crypto.js";
import { issueTokenPair } from "./idp/tokens.js";
import { defaultInstallConfig } from "./install-config.js";
import { ACCESS_TOKEN_EXPIRES_IN_SECONDS } from "./lifetimes.js";
import { dataScopes } from "./scopes.js";
import { BULK_OPERATOR_ID_BASE, MAX_BULK_CHARGES, MAX_BULK_OPERATORS } from "./seed.js";
import type { InstallRecord } from "./store.js";

/** Installs per call at most: 20,000 take a few seconds; more belong in several calls. */
export const MAX_BULK_INSTALLS_PER_CALL = 20_000;
/** install.created deliveries in flight at once when the call asks for them. */
const WEBHOOK_CONCURRENCY = 50;

export const bulkInstallRequestSchema = z
  .object({
    count: z.number().int().min(1).max(MAX_BULK_INSTALLS_PER_CALL),
    /** Data scopes granted (default: the app's requested scopes); offline_access is added, as at consent. */
    scopes: z.array(z.string().regex(SCOPE_PATTERN, "each scope must look like <resource> or <resource>:read|write|delete")).min(1).max(30).optional(),
    /** Charges of each new operator (default 2); each also has one team and three charge points. */
    charges: z.number().int().min(0).max(MAX_BULK_CHARGES).default(2),
    /** Send install.created for each (default false: the response already holds everything the app would store). */
    webhooks: z.boolean().default(false),
  })
  .strict();
export type BulkInstallRequest = z.infer<typeof bulkInstallRequestSchema>;

export const BULK_INSTALL_SHAPE = `Expected {"count": 1-${MAX_BULK_INSTALLS_PER_CALL}, "scopes"?: ["charge-points:read", …] (a subset of the app's requested scopes), "charges"?: 0-${MAX_BULK_CHARGES}, "webhooks"?: boolean}`;

export interface BulkInstall {
  operatorId: number;
  installId: number;
  access_token: string;
  refresh_token: string;
  token_type: "bearer";
  expires_in: number;
  scope: string;
}

export type BulkInstallResult =
  | { ok: true; installs: BulkInstall[]; webhooks: { sent: number; delivered: number; failed: number } | null }
  | { ok: false; message: string };

export async function createBulkInstalls(ctx: SandboxContext, request: BulkInstallRequest): Promise<BulkInstallResult> {
  const requested = requestedScopes(ctx);
  const granted = [...new Set(dataScopes(request.scopes ?? requested))];
  const unknown = granted.filter((scope) => !requested.includes(scope));
  // Consent can only grant what the app requests (contract §2): an install with other scopes could not exist.
  if (unknown.length > 0) return { ok: false, message: `scopes the app does not request (POST /_sandbox/app/scopes first): ${unknown.join(", ")}` };
  const bulk = ctx.store.state.bulkOperators;
  if (bulk.count + request.count > MAX_BULK_OPERATORS) {
    return { ok: false, message: `at most ${MAX_BULK_OPERATORS.toLocaleString("en")} bulk operators in all; ${bulk.count} exist (POST /_sandbox/reset clears them)` };
  }

  const scopes = [...granted, OFFLINE_ACCESS];
  const first = bulk.count + 1;
  // Written as a whole: the state keeps the numbers and charge counts only; the operators' records are derived (operators.ts).
  ctx.store.state.bulkOperators = { count: bulk.count + request.count, batches: [...bulk.batches, { first, count: request.count, charges: request.charges }] };

  const nowMs = ctx.clock.nowMs();
  const now = new Date(nowMs).toISOString();
  const clientId = ctx.config.client.clientId;
  const installs: BulkInstall[] = [];
  const created: InstallRecord[] = [];
  for (let n = first; n < first + request.count; n += 1) {
    const operator = ctx.operators.describe(BULK_OPERATOR_ID_BASE + n)!;
    const installId = ctx.store.state.nextInstallId;
    ctx.store.state.nextInstallId += 1;
    const consumerId = `cons_${randomString(9)}`;
    const install: InstallRecord = {
      installId,
      operatorId: operator.operator.id,
      clientId,
      slug: operator.operator.slug,
      status: "active",
      scopes: [...scopes],
      consumerId,
      needsReauth: false,
      needsReauthSince: null,
      config: defaultInstallConfig(operator.currency),
      createdAt: now,
      updatedAt: null,
      revokedAt: null,
    };
    ctx.store.addInstall(install, {
      id: consumerId,
      installId,
      operatorId: operator.operator.id,
      name: `${ctx.config.client.appName} · ${operator.operator.name}`,
      status: "active",
      scopes: dataScopes(scopes),
      createdAt: now,
      updatedAt: null,
    });
    // One grant per install, as one code exchange would start (its chain: token-stats, decision 21).
    const chainId = `chain_${randomString(12)}`;
    ctx.store.state.chains[chainId] = { installId, createdAtMs: nowMs, revokedAtMs: null, revokedReason: null };
    const tokens = issueTokenPair(ctx, { chainId, clientId, installId, scopes });
    installs.push({
      operatorId: operator.operator.id,
      installId,
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      token_type: "bearer",
      expires_in: ACCESS_TOKEN_EXPIRES_IN_SECONDS,
      scope: scopes.join(" "),
    });
    created.push(install);
  }
  // One event for the batch: 10,000 "created" events would push everything else out of the 5,000-event log.
  ctx.store.addEvent("install", ctx.clock.now(), {
    action: "bulk_created",
    count: request.count,
    first_install_id: installs[0]!.installId,
    last_install_id: installs.at(-1)!.installId,
    first_operator_id: installs[0]!.operatorId,
    last_operator_id: installs.at(-1)!.operatorId,
    charges_per_operator: request.charges,
    webhooks: request.webhooks,
  });
  ctx.log(`bulk: ${request.count} operator(s) with an active install created (install ids ${installs[0]!.installId}-${installs.at(-1)!.installId})`);

  let webhooks: { sent: number; delivered: number; failed: number } | null = null;
  if (request.webhooks) {
    webhooks = { sent: 0, delivered: 0, failed: 0 };
    const queue = [...created];
    const worker = async (): Promise<void> => {
      for (let install = queue.shift(); install; install = queue.shift()) {
        const result = await ctx.webhooks.sendWebhook("install.created", { install_id: install.installId, operator_id: install.operatorId, slug: install.slug });
        webhooks!.sent += 1;
        if (result.ok) webhooks!.delivered += 1;
        else webhooks!.failed += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.min(WEBHOOK_CONCURRENCY, created.length) }, worker));
  }
  return { ok: true, installs, webhooks };
}
