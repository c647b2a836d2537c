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
const PRUNE_AFTER_MS = 60 * 60 * 1000;

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
  await db().authorizationCodeClaim.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - PRUNE_AFTER_MS) } } });
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
