// One redemption per authorization code, across requests and instances.
//
// A code works once (contract §2), and presenting it a second time makes the identity provider
// revoke the tokens issued from it (public-facts.md: it behaves like Ory Hydra). A double click or
// a browser retry on a slow redirect_uri would do exactly that, destroying the pair the first
// request is storing. So the first request claims the code (by its hash) before redeeming it, and
// a concurrent copy waits for that request's outcome instead of presenting the code again.
import "server-only";
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Tx } from "@/lib/db/client";
import { db } from "@/lib/db/client";

/** Long enough for the first request's redemption (two calls, each within the HTTP timeout). */
const WAIT_FOR_FIRST_MS = 25_000;

/**
 * How long a claim is kept, and why it depends on the claim.
 *
 * A redeemed code (`done`) produced a token chain, and presenting that code again makes the
 * identity provider revoke the whole chain (contract §3: codes work once; public-facts.md: Hydra
 * revokes every token issued from a reused code). The callback URL with the code stays in browser
 * history, autocomplete and proxy logs for as long as anyone likes, so the claim that stops it
 * being sent again must live as long as the chain can: refresh tokens rotate for ever (keep-alive),
 * so that is until the install is revoked. A revoked install's chain is dead already, and a deleted
 * install row has nothing left to protect. One small row per consent is the whole cost.
 *
 * A `failed` or `pending` claim protects nothing after its code has expired (one minute, contract
 * §2): a failed code produced no chain the app holds, and a pending one older than an hour belongs
 * to a request that died. Those are pruned after an hour, which also bounds what a stranger's
 * random codes can leave behind.
 */
const PRUNE_UNREDEEMED_AFTER_MS = 60 * 60 * 1000;

/**
 * Deletes the claims that protect nothing any more (see above). Raw SQL because the claim names its
 * install by row id without a relation (a claim is written before the install exists).
 */
async function pruneClaims(): Promise<void> {
  const cutoff = new Date(Date.now() - PRUNE_UNREDEEMED_AFTER_MS);
  await db().$executeRaw`
    DELETE FROM authorization_code_claims c
    WHERE c.created_at < ${cutoff}
      AND (c.state <> 'done'
           OR NOT EXISTS (SELECT 1 FROM installs i WHERE i.id = c.install_row_id AND i.status <> 'REVOKED'))`;
}

export type CodeClaim =
  | { kind: "claimed"; codeHash: string }
  /** A concurrent request with the same code finished while this one waited: the same outcome. */
  | { kind: "completed_by_other"; installRowId: string; operatorId: string }
  /** The code's redemption failed (in this request's copy, or earlier): the same failure. */
  | { kind: "failed_for_other"; failure: string }
  /** The code was redeemed earlier: this is a reuse. It is not sent to the identity provider. */
  | { kind: "used" }
  | { kind: "still_pending" };

export function hashCode(code: string): string {
  return createHash("sha256").update(code).digest("hex");
}

export async function claimAuthorizationCode(code: string): Promise<CodeClaim> {
  const codeHash = hashCode(code);
  await pruneClaims();
  const { count } = await db().authorizationCodeClaim.createMany({ data: { codeHash, state: "pending" }, skipDuplicates: true });
  if (count === 1) return { kind: "claimed", codeHash };

  const first = await db().authorizationCodeClaim.findUnique({ where: { codeHash } });
  // A code whose redemption failed fails the same way again (an expired code stays expired).
  if (first?.state === "failed") return { kind: "failed_for_other", failure: first.failure ?? "code_rejected" };
  if (first?.state !== "pending") return { kind: "used" };
  // Another request is redeeming this code right now: wait for its outcome.
  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  while (Date.now() < deadline) {
    await sleep(200);
    const row = await db().authorizationCodeClaim.findUnique({ where: { codeHash } });
    if (row?.state === "done" && row.installRowId && row.operatorId) {
      return { kind: "completed_by_other", installRowId: row.installRowId, operatorId: row.operatorId };
    }
    if (row?.state === "failed") return { kind: "failed_for_other", failure: row.failure ?? "code_rejected" };
  }
  return { kind: "still_pending" };
}

export async function markCodeDone(tx: Tx, codeHash: string, installRowId: string, operatorId: string): Promise<void> {
  await tx.authorizationCodeClaim.update({ where: { codeHash }, data: { state: "done", installRowId, operatorId } });
}

export async function markCodeFailed(codeHash: string, failure: string): Promise<void> {
  await db()
    .authorizationCodeClaim.update({ where: { codeHash }, data: { state: "failed", failure } })
    .catch(() => undefined); // best effort: a waiting copy gives up after its deadline anyway
}

/**
 * A configuration fault that would otherwise stay invisible: the identity provider keeps refusing
 * codes the app presents for the first time (its own claims rule out a reload or a double click).
 * One refusal is an operator who waited too long; several within minutes, with no install
 * succeeding in between, most likely mean that the redirect_uri the app sends is not the one
 * registered (contract §5.3: exact match). A stranger sending made-up codes can raise it too, which
 * is why it only asks staff to check, and clears by itself once an install succeeds.
 */
export const CODE_REFUSAL_ALARM = { threshold: 3, windowMs: 15 * 60 * 1000 } as const;

export type CodeRefusalAlarm = { raised: false } | { raised: true; refusals: number; latestAt: Date };

/** `refusalFailures`: the failure reasons that record an invalid_grant refusal (lib/installs/connect.ts). */
export async function readCodeRefusalAlarm(refusalFailures: readonly string[]): Promise<CodeRefusalAlarm> {
  const lastSuccess = await db().authorizationCodeClaim.findFirst({ where: { state: "done" }, orderBy: { updatedAt: "desc" }, select: { updatedAt: true } });
  const windowStart = new Date(Date.now() - CODE_REFUSAL_ALARM.windowMs);
  const since = lastSuccess && lastSuccess.updatedAt > windowStart ? lastSuccess.updatedAt : windowStart;
  const where = { state: "failed", failure: { in: [...refusalFailures] }, updatedAt: { gt: since } };
  const refusals = await db().authorizationCodeClaim.count({ where });
  if (refusals < CODE_REFUSAL_ALARM.threshold) return { raised: false };
  const latest = await db().authorizationCodeClaim.findFirst({ where, orderBy: { updatedAt: "desc" }, select: { updatedAt: true } });
  return { raised: true, refusals, latestAt: latest?.updatedAt ?? new Date() };
}
