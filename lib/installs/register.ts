// Records that an install exists: the one function both the redirect_uri callback and the
// install.created webhook go through, in whichever order they arrive.
//
// contract §2: only one active install per app and operator, and a re-install is a new install_id.
// The database enforces the first rule with a partial unique index (see the init migration); this
// function keeps to it by retiring an older live install when a newer one appears.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { transitionInstall, type TransitionCause } from "./state";

export type InstallFacts = {
  /** The service's install_id, when known (see lib/installs/identity.ts). */
  installId: number | null;
  operatorId: string;
  clientId: string;
  slug?: string | null;
  grantedScopes?: string[];
};

const LIVE = ["ACTIVE", "NEEDS_REAUTH", "REINSTALL_NEEDED"] as const;

/**
 * Finds or creates the install row the facts describe and returns its id. Idempotent: the same
 * facts twice change nothing the second time.
 */
export async function recordInstall(tx: Tx, facts: InstallFacts, cause: TransitionCause): Promise<{ id: string; created: boolean }> {
  // Serialize writers for one operator (callback and webhook may race) for this transaction.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`install:${facts.clientId}:${facts.operatorId}`}))`;

  const known = facts.installId !== null ? await tx.install.findUnique({ where: { installId: facts.installId } }) : null;
  if (known) {
    await tx.install.update({
      where: { id: known.id },
      data: {
        ...(facts.slug ? { slug: facts.slug } : {}),
        ...(facts.grantedScopes ? { grantedScopes: facts.grantedScopes } : {}),
      },
    });
    return { id: known.id, created: false };
  }

  const live = await tx.install.findFirst({
    where: { clientId: facts.clientId, operatorId: facts.operatorId, status: { in: [...LIVE] } },
  });

  if (live && (live.installId === null || facts.installId === null)) {
    // Same live install, learned from the other side: bind the id we now know.
    await tx.install.update({
      where: { id: live.id },
      data: {
        ...(live.installId === null && facts.installId !== null ? { installId: facts.installId } : {}),
        ...(facts.slug ? { slug: facts.slug } : {}),
        ...(facts.grantedScopes ? { grantedScopes: facts.grantedScopes } : {}),
      },
    });
    return { id: live.id, created: false };
  }

  let startRevoked = false;
  if (live && live.installId !== null && facts.installId !== null) {
    // Two different install_ids for one operator: only the newer can be active at the service.
    // install_ids increase (docs/spec-gaps.md); a late event about an older install is history.
    if (live.installId < facts.installId) {
      await transitionInstall(tx, live.id, "REVOKED", cause, `superseded by install ${facts.installId}`);
    } else {
      startRevoked = true;
    }
  }

  const row = await tx.install.create({
    data: {
      installId: facts.installId,
      clientId: facts.clientId,
      operatorId: facts.operatorId,
      slug: facts.slug ?? null,
      grantedScopes: facts.grantedScopes ?? [],
      status: startRevoked ? "REVOKED" : "ACTIVE",
      revokedAt: startRevoked ? new Date() : null,
    },
  });
  await tx.installEvent.create({
    data: {
      installRowId: row.id,
      fromStatus: null,
      toStatus: row.status,
      cause,
      detail: startRevoked ? `older than live install ${live?.installId}` : "install recorded",
    },
  });
  return { id: row.id, created: true };
}
