// Records that an install exists: the one function both the redirect_uri callback and the
// install.created webhook go through, in whichever order they arrive.
//
// contract §2: only one active install per app and operator, and a re-install is a new install_id.
// The database enforces the first rule with a partial unique index (see the init migration); this
// function keeps to it by retiring an older live install when a newer one appears.
//
// The hard case is a callback that does not know its install_id (the service is not documented to
// send it: docs/spec-gaps.md A2). Each install has its own consumer (§2), so the consumer behind
// the token (`consumerKey`) tells a re-consent of the same install from a new install.
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
  /** The operator's name, when the service stated one (callback only; see identity.ts). */
  operatorName?: string | null;
  /** Which consumer the tokens belong to (callback only). */
  consumerKey?: string | null;
};

/** The service's facts contradict what the app stored (e.g. one install_id, two operators). */
export class InstallConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InstallConflictError";
  }
}

export const LIVE = ["ACTIVE", "NEEDS_REAUTH", "REINSTALL_NEEDED"] as const;

/**
 * The advisory lock that serializes every writer of one operator's installs (the redirect_uri, the
 * webhooks, and the webhook's one-statement path in lib/webhooks/handlers/install-created.ts).
 */
export function installLockKey(clientId: string, operatorId: string): string {
  return `install:${clientId}:${operatorId}`;
}

function learned(facts: InstallFacts, row: { installId: number | null; consumerKey: string | null }) {
  return {
    ...(row.installId === null && facts.installId !== null ? { installId: facts.installId } : {}),
    ...(row.consumerKey === null && facts.consumerKey ? { consumerKey: facts.consumerKey } : {}),
    ...(facts.slug ? { slug: facts.slug } : {}),
    ...(facts.grantedScopes ? { grantedScopes: facts.grantedScopes } : {}),
    // The newest statement wins (an operator may rename itself); silence keeps what was learned.
    ...(facts.operatorName ? { operatorName: facts.operatorName } : {}),
  };
}

/**
 * Finds or creates the install row the facts describe and returns its id. Idempotent: the same
 * facts twice change nothing the second time.
 */
export async function recordInstall(tx: Tx, facts: InstallFacts, cause: TransitionCause): Promise<{ id: string; created: boolean }> {
  // Serialize writers for one operator (callback and webhook may race) for this transaction.
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${installLockKey(facts.clientId, facts.operatorId)}))`;

  const known = facts.installId !== null ? await tx.install.findUnique({ where: { installId: facts.installId } }) : null;
  if (known) {
    if (known.operatorId !== facts.operatorId) {
      throw new InstallConflictError(`install ${facts.installId} is stored for another operator`);
    }
    await tx.install.update({ where: { id: known.id }, data: learned(facts, known) });
    return { id: known.id, created: false };
  }

  const live = await tx.install.findFirst({
    where: { clientId: facts.clientId, operatorId: facts.operatorId, status: { in: [...LIVE] } },
  });

  if (live) {
    const idsCompatible = live.installId === null || facts.installId === null;
    const consumersDiffer = !!facts.consumerKey && !!live.consumerKey && facts.consumerKey !== live.consumerKey;
    if (idsCompatible && !consumersDiffer) {
      // The same live install, learned from the other side: keep what we now know.
      await tx.install.update({ where: { id: live.id }, data: learned(facts, live) });
      return { id: live.id, created: false };
    }
  }

  let startRevoked = false;
  if (live) {
    // Two different installs for one operator: only the newer can be active at the service.
    if (cause === "callback") {
      // A consent that just produced working tokens is the newest fact there is.
      await transitionInstall(tx, live.id, "REVOKED", cause, "superseded by a new consent");
    } else if (live.installId !== null && facts.installId !== null && live.installId > facts.installId) {
      // install_ids increase (docs/spec-gaps.md A3): a late event about an older install is history.
      startRevoked = true;
    } else {
      await transitionInstall(tx, live.id, "REVOKED", cause, `superseded by install ${facts.installId}`);
    }
  }

  const row = await createInstallRow(
    tx,
    facts,
    startRevoked ? "REVOKED" : "ACTIVE",
    cause,
    startRevoked ? `older than live install ${live?.installId}` : "install recorded",
  );
  return { id: row.id, created: true };
}

/**
 * Records an install the app only hears of as revoked (install.revoked for an unknown install_id)
 * as history, without binding it to any live row: with no install_id on the live row, nothing
 * proves they are the same install. The caller reconciles the operator's live install instead.
 */
export async function recordRevokedInstall(tx: Tx, facts: InstallFacts): Promise<string> {
  const row = await createInstallRow(tx, facts, "REVOKED", "webhook", "install.revoked for an install the app had not seen");
  return row.id;
}

async function createInstallRow(tx: Tx, facts: InstallFacts, status: "ACTIVE" | "REVOKED", cause: TransitionCause, detail: string) {
  const row = await tx.install.create({
    data: {
      installId: facts.installId,
      clientId: facts.clientId,
      operatorId: facts.operatorId,
      slug: facts.slug ?? null,
      operatorName: facts.operatorName ?? null,
      consumerKey: facts.consumerKey ?? null,
      grantedScopes: facts.grantedScopes ?? [],
      status,
      revokedAt: status === "REVOKED" ? new Date() : null,
    },
  });
  await tx.installEvent.create({ data: { installRowId: row.id, fromStatus: null, toStatus: status, cause, detail } });
  return row;
}
