// The refresh coordinator: the only code that sends a refresh token.
//
// contract §3 and public-facts.md: refresh tokens rotate, and presenting one that was already used
// revokes the whole chain (every refresh and access token of the consent); the operator must then
// re-install. So the rules here are:
//
//  1. One refresh per install at a time: in a process (a shared promise), and across processes
//     and instances (a Postgres advisory lock held for the whole refresh). Whoever gets the lock
//     re-reads the grant; if it moved on since the caller read it, the new token is simply used.
//  2. Before a refresh token is sent, a marker (`refresh_started_at`) is committed. It is cleared
//     in the same write that stores the new pair, or when the outcome is known to have spent
//     nothing. A marker that is still there means the outcome is unknown: a crash between the
//     answer and the commit, a timeout, a 5xx, a reset connection, an `invalid_request`.
//  3. A refresh token whose outcome is unknown is never sent again until the store is re-read and
//     the outcome settled: the old access token is probed. A successful refresh revokes every
//     earlier access token at once (public-facts.md), so if the old token still works, the refresh
//     did not happen and it is safe to refresh; if it gets 401, the new pair was issued and lost,
//     and the install needs a re-install: an explicit state, never a retry loop.
import "server-only";
import { setTimeout as sleep } from "node:timers/promises";
import { db } from "@/lib/db/client";
import { Prisma } from "@/lib/db/generated/client";
import type { InstallStatus } from "@/lib/db/generated/enums";
import { env } from "@/lib/env";
import { transitionInstall } from "@/lib/installs/state";
import { logger } from "@/lib/log";
import { PartnerApiError, fetchConsumer } from "@/lib/partner-api/client";
import { TokenCircuitOpenError, assertTokenCircuitClosed, openTokenCircuit } from "./circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "./errors";
import { TokenEndpointError, requestTokenRefresh } from "./token-endpoint";
import {
  clearRefreshMarker,
  markRefreshStarted,
  readGrantForUse,
  readRefreshToken,
  storeRefreshedTokens,
  type GrantForUse,
  type StoredAccessToken,
} from "./token-vault";

/** How long the lock may be waited for before the caller is told to try again later. */
const LOCK_WAIT = "20s";
/** A stored pair is retried this long while the database is unreachable, so it is not lost. */
const COMMIT_RETRY_MS = 30_000;

const inFlight = new Map<string, Promise<StoredAccessToken>>();

/**
 * Returns a fresh access token for the install, refreshing it unless someone else already did
 * (the grant's version moved past `observedVersion`). Concurrent callers share one refresh.
 */
export function refreshInstallTokens(installRowId: string, observedVersion: number): Promise<StoredAccessToken> {
  const pending = inFlight.get(installRowId);
  if (pending) return pending;
  const refresh = refreshUnderLock(installRowId, observedVersion).finally(() => inFlight.delete(installRowId));
  inFlight.set(installRowId, refresh);
  return refresh;
}

/**
 * Why the app must not use the install's token for an API call, or null when it may. A flagged
 * install's token is still valid and is kept fresh (keep-alive), but only the probe that checks
 * whether the operator re-consented may use it (lib/installs/reauth.ts).
 */
export function noUsableTokenReason(status: InstallStatus): NoUsableTokenError["reason"] | null {
  switch (status) {
    case "ACTIVE":
      return null;
    case "NEEDS_REAUTH":
      return "needs_reauth";
    case "REINSTALL_NEEDED":
      return "reinstall_needed";
    case "REVOKED":
      return "revoked";
  }
}

async function refreshUnderLock(installRowId: string, observedVersion: number): Promise<StoredAccessToken> {
  const httpTimeoutMs = env().HTTP_TIMEOUT_MS;
  let outcome: StoredAccessToken | undefined;
  try {
    // The transaction only holds the lock; the grant is read and written on other connections, so
    // the marker is committed before the request is sent. If this process dies, its connection
    // closes and Postgres releases the lock.
    await db().$transaction(
      async (lock) => {
        await lock.$queryRaw`SELECT set_config('lock_timeout', ${LOCK_WAIT}, true)`;
        await lock.$queryRaw`SELECT pg_advisory_xact_lock(hashtext(${`refresh:${installRowId}`}))::text`;
        outcome = await refreshHoldingLock(installRowId, observedVersion);
      },
      { maxWait: 10_000, timeout: 2 * httpTimeoutMs + COMMIT_RETRY_MS + 20_000 },
    );
  } catch (error) {
    // The work may have finished and only releasing the lock failed (e.g. the database went away
    // after the commit): the stored outcome stands.
    if (outcome) return outcome;
    if (
      error instanceof NoUsableTokenError ||
      error instanceof TokenRefreshUnavailableError ||
      error instanceof TokenCircuitOpenError ||
      error instanceof TokenEndpointError
    ) {
      throw error;
    }
    logger.warn({ installRowId, err: error }, "refresh could not take the install's lock");
    throw new TokenRefreshUnavailableError("the refresh lock or the database is unavailable");
  }
  if (!outcome) throw new TokenRefreshUnavailableError("no outcome");
  return outcome;
}

async function refreshHoldingLock(installRowId: string, observedVersion: number): Promise<StoredAccessToken> {
  await assertTokenCircuitClosed();
  const grant = await readGrantForUse(db(), installRowId);
  if (!grant) throw new NoUsableTokenError("no_grant");
  // A flagged install's chain is kept alive too: the operator may take weeks to re-consent.
  const unusable = noUsableTokenReason(grant.installStatus);
  if (unusable && unusable !== "needs_reauth") throw new NoUsableTokenError(unusable);

  if (grant.refreshStartedAt) {
    await settleUnknownRefresh(installRowId, grant);
  } else if (grant.version !== observedVersion) {
    return grant; // another request or instance refreshed while we waited for the lock
  }

  const stored = await readRefreshToken(db(), installRowId);
  if (!stored) {
    await moveToReinstallNeeded(installRowId, "no refresh token stored (offline_access not granted?)");
    throw new NoUsableTokenError("reinstall_needed");
  }
  const sentAt = new Date();
  if (!(await markRefreshStarted(db(), installRowId, stored.version, sentAt))) {
    throw new TokenRefreshUnavailableError("the grant changed while refreshing");
  }

  let tokens;
  try {
    tokens = await requestTokenRefresh(stored.refreshToken);
  } catch (error) {
    return handleRefreshFailure(installRowId, error);
  }

  const committed = await commitWithRetry(() => storeRefreshedTokens(db(), installRowId, stored.version, tokens, sentAt));
  if (!committed) {
    // Only a new consent (the redirect_uri) writes a grant without this lock: its chain wins.
    logger.warn({ installRowId }, "a new consent replaced the grant during a refresh; the refreshed pair is discarded");
    const current = await readGrantForUse(db(), installRowId);
    if (!current) throw new NoUsableTokenError("no_grant");
    return current;
  }
  logger.info({ installRowId, version: stored.version + 1 }, "tokens refreshed");
  return {
    accessToken: tokens.accessToken,
    expiresAt: new Date(sentAt.getTime() + tokens.expiresIn * 1000),
    version: stored.version + 1,
  };
}

async function handleRefreshFailure(installRowId: string, error: unknown): Promise<never> {
  if (error instanceof TokenEndpointError) {
    switch (error.kind) {
      case "invalid_grant":
        // contract §7: the refresh token was replayed or the install revoked: only a re-install helps.
        await clearRefreshMarker(db(), installRowId);
        await moveToReinstallNeeded(installRowId, `refresh rejected (invalid_grant): ${error.description ?? "no description"}`);
        throw new NoUsableTokenError("reinstall_needed");
      case "invalid_client":
        // The client itself was refused, so the refresh token was not looked at.
        await clearRefreshMarker(db(), installRowId);
        await openTokenCircuit(error.description ?? "invalid_client");
        throw new TokenCircuitOpenError();
      case "not_sent":
        await clearRefreshMarker(db(), installRowId);
        throw new TokenRefreshUnavailableError(`the identity provider could not be reached (${error.description})`);
      default:
        // unavailable, invalid_request, bad_response, other: the token may have been spent.
        // The marker stays; the next attempt settles the outcome before sending anything.
        logger.warn({ installRowId, kind: error.kind, status: error.status }, "refresh outcome unknown; it will be settled before any retry");
        throw new TokenRefreshUnavailableError(`refresh outcome unknown (${error.kind})`);
    }
  }
  throw error;
}

/** See rule 3 at the top of this file. Returns when it is safe to refresh; throws otherwise. */
async function settleUnknownRefresh(installRowId: string, grant: GrantForUse): Promise<void> {
  const startedAt = grant.refreshStartedAt!;
  const { HTTP_TIMEOUT_MS } = env();
  if (Date.now() - startedAt.getTime() < HTTP_TIMEOUT_MS + 5_000) {
    // The earlier request could still be in flight at the identity provider: wait it out.
    throw new TokenRefreshUnavailableError("an earlier refresh is still settling");
  }
  if (grant.expiresAt.getTime() <= Date.now()) {
    await clearRefreshMarker(db(), installRowId);
    await moveToReinstallNeeded(
      installRowId,
      "a refresh's outcome is unknown and the old access token has expired, so nothing can show whether the refresh token was spent",
    );
    throw new NoUsableTokenError("reinstall_needed");
  }
  try {
    await fetchConsumer(grant.accessToken);
  } catch (error) {
    if (error instanceof PartnerApiError && error.kind === "unauthorized") {
      await clearRefreshMarker(db(), installRowId);
      await moveToReinstallNeeded(installRowId, "a refresh succeeded but its answer was lost (the old access token is revoked)");
      throw new NoUsableTokenError("reinstall_needed");
    }
    if (!(error instanceof PartnerApiError) || !["needs_reauth", "forbidden", "rate_limited"].includes(error.kind)) {
      throw new TokenRefreshUnavailableError("could not settle an earlier refresh's outcome");
    }
    // A 403 or 429 still means the token was accepted as valid.
  }
  logger.info({ installRowId }, "an earlier refresh did not happen (the old access token still works); refreshing");
  await clearRefreshMarker(db(), installRowId);
}

async function moveToReinstallNeeded(installRowId: string, detail: string): Promise<void> {
  await db().$transaction((tx) => transitionInstall(tx, installRowId, "REINSTALL_NEEDED", "refresh", detail));
  logger.warn({ installRowId, detail }, "install needs a re-install");
}

function isRetriableDatabaseError(error: unknown): boolean {
  // Constraint and validation errors will not go away; connection failures may.
  return !(error instanceof Prisma.PrismaClientKnownRequestError && error.code.startsWith("P2")) && !(error instanceof Prisma.PrismaClientValidationError);
}

async function commitWithRetry<T>(write: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + COMMIT_RETRY_MS;
  for (let delay = 250; ; delay = Math.min(delay * 2, 4_000)) {
    try {
      return await write();
    } catch (error) {
      if (Date.now() + delay > deadline || !isRetriableDatabaseError(error)) {
        logger.error({ err: error }, "the refreshed tokens could not be stored; the refresh marker stays set");
        throw new TokenRefreshUnavailableError("the database is unavailable");
      }
      logger.warn("the database did not take the refreshed tokens; retrying");
      await sleep(delay);
    }
  }
}
