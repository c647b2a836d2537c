// The refresh coordinator: the only code that sends a refresh token.
//
// contract §3 and public-facts.md: refresh tokens rotate, and presenting one that was already used
// revokes the whole chain (every refresh and access token of the consent); the operator must then
// re-install. So the rules here are:
//
//  1. One refresh per install at a time: in a process (a shared promise), and across processes
//     and instances (a Postgres advisory lock held for the whole refresh, on a connection of its
//     own so that no pooled connection waits on the identity provider: refresh-lock.ts). Whoever
//     gets the lock re-reads the grant; if it moved on since the caller read it, the new token is
//     simply used.
//  2. Before a refresh token is sent, a marker (`refresh_started_at`) is committed. It is cleared
//     in the same write that stores the new pair, or when the outcome is known to have spent
//     nothing. A marker that is still there means the outcome is unknown: a crash between the
//     answer and the commit, a timeout, a 5xx, a reset connection, an `invalid_request`.
//  3. A refresh token whose outcome is unknown is never sent again before the store is re-read and
//     the outcome settled, and only once no earlier attempt can still be in flight or committing.
//     The old access token is probed first. If it gets 401, the refresh most likely happened and
//     its new pair is lost: the operator must reconnect, an explicit state, never a retry loop.
//     If it still works, that is proof only where the app has seen the identity provider revoke
//     the access token a refresh replaced (issuer-facts.ts: Hydra does, public-facts.md): then the
//     refresh did not happen, and the refresh token is sent once more, which saves the install.
//     Anywhere else (RFC 6749 §6 lets a server keep earlier access tokens valid; or the app has not
//     looked yet) the refresh may have happened all the same, and a resend would be a reuse that
//     revokes the grant by the app's own act. So the token is never sent again: the install serves
//     on the old access token until it expires, the operator is asked to reconnect from the portal
//     before then (a re-consent keeps the install), and staff get one alert (A185). If the old
//     token has expired, nothing can tell and nothing serves any more; the refresh is tried once
//     more: a spent token's new pair is lost already, an unspent one is saved by it.
//  4. Every attempt leaves one row in the refresh history (refresh-history.ts), its outcome in the
//     app's own words, written after the lock is let go: the console's timeline shows the refused and
//     unknown refreshes as well as the successes. The code below notes the outcome as it learns it.
import "server-only";
import { db } from "@/lib/db/client";
import { retryWhileDatabaseUnavailable } from "@/lib/db/retry";
import type { InstallStatus } from "@/lib/db/generated/enums";
import { env } from "@/lib/env";
import { alertOnRefreshAnswerLost } from "@/lib/alerts/incidents";
import { REFRESH_ANSWER_LOST, transitionInstall } from "@/lib/installs/state";
import { logger } from "@/lib/log";
import { holdExitFor } from "@/lib/shutdown";
import { PartnerApiError, callFor, fetchConsumer } from "@/lib/partner-api/client";
import { traceRefresh, type RefreshOutcome } from "@/lib/telemetry";
import { TokenCircuitOpenError, assertTokenCircuitClosed, noteTokenEndpointAccepted, openTokenCircuit } from "./circuit";
import { NoUsableTokenError, TokenRefreshUnavailableError } from "./errors";
import { recordRefreshAttempt, type RefreshAttemptNote, type RefreshAttemptOutcome } from "./refresh-history";
import { withRefreshLock } from "./refresh-lock";
import { lookAtReplacedAccessToken, oldAccessTokensAfterRefresh } from "./issuer-facts";
import { TokenEndpointError, ensureOAuthConfiguration, requestTokenRefresh } from "./token-endpoint";
import {
  clearRefreshMarker,
  markRefreshAnswerLost,
  markRefreshStarted,
  readGrantForRefresh,
  readGrantForUse,
  storeRefreshedTokens,
  type GrantForUse,
  type StoredAccessToken,
} from "./token-vault";

/** A stored pair is retried this long while the database is unreachable, so it is not lost. */
const COMMIT_RETRY_MS = 30_000;

/**
 * An earlier attempt may still be answered (up to the HTTP timeout) and then committing (up to the
 * commit retry): its marker is settled only after both, with a margin.
 */
function settleAfterMs(): number {
  return env().HTTP_TIMEOUT_MS + COMMIT_RETRY_MS + 15_000;
}

const inFlight = new Map<string, Promise<StoredAccessToken>>();

/**
 * Returns a fresh access token for the install, refreshing it unless someone else already did
 * (the grant's version moved past `observedVersion`). Concurrent callers share one refresh.
 */
export function refreshInstallTokens(installRowId: string, observedVersion: number): Promise<StoredAccessToken> {
  const pending = inFlight.get(installRowId);
  if (pending) return pending;
  const startedAt = new Date();
  const attempt: RefreshAttemptNote = {};
  // One span, one count and one history row per refresh, however many callers share it (lib/telemetry,
  // rule 4). The row is written once the outcome is known and the lock is let go: one insert, and a
  // failure to write it is swallowed (refresh-history.ts).
  const refresh = traceRefresh(installRowId, (noteOutcome) => refreshUnderLock(installRowId, observedVersion, noteOutcome, attempt), refreshOutcomeOf)
    .then(
      async (stored) => {
        await recordRefreshAttempt(installRowId, startedAt, attempt.outcome ?? "refreshed", attempt.detail ?? null);
        return stored;
      },
      async (error: unknown) => {
        await recordRefreshAttempt(installRowId, startedAt, attempt.outcome ?? historyOutcomeOf(error), attempt.detail ?? null);
        throw error;
      },
    )
    .finally(() => inFlight.delete(installRowId));
  inFlight.set(installRowId, refresh);
  // Its answer is the only copy of the new refresh token: a stopping process waits for it (lib/shutdown.ts).
  holdExitFor(refresh);
  return refresh;
}

/** The history's outcome when the code that failed noted none: read from what it threw. */
function historyOutcomeOf(error: unknown): RefreshAttemptOutcome {
  if (error instanceof NoUsableTokenError) return error.reason === "reinstall_needed" ? "reinstall_needed" : "unusable";
  if (error instanceof TokenCircuitOpenError) return "circuit_open";
  if (error instanceof TokenRefreshUnavailableError) return "unavailable";
  return "error";
}

/** Notes the attempt's outcome for the history (rule 4): the last note counts. */
function note(attempt: RefreshAttemptNote, outcome: RefreshAttemptOutcome, detail?: string): void {
  attempt.outcome = outcome;
  attempt.detail = detail;
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

/** A refresh's outcome for telemetry, from what it threw (the successes are noted where they happen). */
function refreshOutcomeOf(error: unknown): RefreshOutcome {
  if (error instanceof NoUsableTokenError) return error.reason === "reinstall_needed" ? "reinstall_needed" : "unusable";
  if (error instanceof TokenCircuitOpenError) return "circuit_open";
  if (error instanceof TokenRefreshUnavailableError) return "unavailable";
  return "error";
}

type NoteOutcome = (outcome: RefreshOutcome) => void;

async function refreshUnderLock(installRowId: string, observedVersion: number, noteOutcome: NoteOutcome, attempt: RefreshAttemptNote): Promise<StoredAccessToken> {
  try {
    // The lock's connection only holds the lock; the grant is read and written through the pool,
    // one short statement at a time, so the marker is committed before the request is sent and no
    // pooled connection is held while the identity provider answers. If releasing the lock fails
    // (the database went away after the commit), the stored outcome still stands (refresh-lock.ts).
    return await withRefreshLock(installRowId, () => refreshHoldingLock(installRowId, observedVersion, noteOutcome, attempt));
  } catch (error) {
    if (
      error instanceof NoUsableTokenError ||
      error instanceof TokenRefreshUnavailableError ||
      error instanceof TokenCircuitOpenError
    ) {
      throw error;
    }
    logger.warn({ installRowId, err: error }, "refresh could not take the install's lock, or the database failed under it");
    // What the refresh learned before the failure stands (a refusal, a pair the database did not take).
    if (!attempt.outcome) note(attempt, "unavailable", "the refresh lock or the database failed");
    throw new TokenRefreshUnavailableError("the refresh lock or the database is unavailable");
  }
}

async function refreshHoldingLock(installRowId: string, observedVersion: number, noteOutcome: NoteOutcome, attempt: RefreshAttemptNote): Promise<StoredAccessToken> {
  await assertTokenCircuitClosed();
  // The grant and its refresh token in one read: under the lock nobody else refreshes it, and a write
  // without the lock (a new consent, a revocation) is caught by the marker's compare-and-set below.
  const grant = await readGrantForRefresh(db(), installRowId);
  if (!grant) {
    note(attempt, "unusable", "no grant stored");
    throw new NoUsableTokenError("no_grant");
  }
  // A flagged install's chain is kept alive too: the operator may take weeks to re-consent.
  const unusable = noUsableTokenReason(grant.installStatus);
  if (unusable && unusable !== "needs_reauth") {
    note(attempt, "unusable", `the install is ${grant.installStatus}`);
    throw new NoUsableTokenError(unusable);
  }

  // A lost answer nothing could settle (rule 3): its refresh token is never sent again.
  if (grant.refreshAnswerLostAt) return serveUntilReconnect(installRowId, grant, noteOutcome, attempt);
  // Set when the refresh below re-sends a token whose earlier answer was lost (rule 3).
  let resend: ResendBasis | null = null;
  if (grant.refreshStartedAt) {
    const settled = await settleUnknownRefresh(installRowId, grant, noteOutcome, attempt);
    if (typeof settled !== "string") return settled;
    resend = settled;
  } else if (grant.version !== observedVersion) {
    noteOutcome("not_needed");
    note(attempt, "not_needed", "another request or instance had refreshed");
    // Another request or instance refreshed while we waited for the lock. Returned without the
    // refresh token's opener: only this function sends a refresh token (the top of this file).
    return { accessToken: grant.accessToken, expiresAt: grant.expiresAt, version: grant.version };
  }

  const refreshToken = grant.openRefreshToken();
  const stored = refreshToken ? { refreshToken, version: grant.version } : null;
  if (!stored) {
    note(attempt, "reinstall_needed", "no refresh token stored");
    await moveToReinstallNeeded(installRowId, "no refresh token stored (offline_access not granted?)");
    throw new NoUsableTokenError("reinstall_needed");
  }
  // Discovery can fail on its own (the issuer is away, or OAUTH_ISSUER is misspelt); do it before
  // the marker, while nothing has been sent: then nothing is unknown, and a later call simply tries
  // again. Whatever discovery throws becomes "unavailable", so every caller (pages, jobs, probes)
  // already knows how to explain it; staff see the cause in the log.
  try {
    await ensureOAuthConfiguration();
  } catch (error) {
    const detail = error instanceof TokenEndpointError ? `${error.kind}${error.status ? ` HTTP ${error.status}` : ""}` : "failed";
    logger.error({ installRowId, discovery: detail }, "the identity provider's discovery document could not be read; no refresh was sent (check OAUTH_ISSUER)");
    note(attempt, "unavailable", `discovery ${detail}; nothing was sent`);
    throw new TokenRefreshUnavailableError(`the identity provider could not be discovered (${detail}); nothing was sent`);
  }
  const sentAt = new Date();
  if (!(await markRefreshStarted(db(), installRowId, stored.version, sentAt))) {
    note(attempt, "not_sent", "the grant changed before the refresh was sent");
    throw new TokenRefreshUnavailableError("the grant changed while refreshing");
  }

  let tokens;
  try {
    tokens = await requestTokenRefresh(stored.refreshToken);
  } catch (error) {
    return handleRefreshFailure(installRowId, error, resend, attempt);
  }
  // The identity provider answered with a new pair: from here, an error means its commit failed.
  note(attempt, "unknown", "refreshed at the identity provider; the new pair could not be stored");

  const committed = await commitWithRetry(() => storeRefreshedTokens(db(), installRowId, stored.version, sentAt, tokens, sentAt));
  if (!committed) {
    // Someone wrote the grant without this lock: a new consent (the redirect_uri) stored a new
    // chain, or install.revoked deleted the grant. Theirs is the newer fact; this pair is dropped.
    logger.warn({ installRowId }, "the grant changed during a refresh (new consent or revocation); the refreshed pair is discarded");
    note(attempt, "discarded", "the grant changed during the refresh (a new consent or a revocation)");
    const current = await readGrantForUse(db(), installRowId);
    if (!current || noUsableTokenReason(current.installStatus)) throw new NoUsableTokenError("revoked");
    return current;
  }
  logger.info({ installRowId, version: stored.version + 1 }, "tokens refreshed");
  note(attempt, "refreshed", resend ? `sent once more after an earlier answer was lost (${resend})` : undefined);
  await noteTokenEndpointAccepted();
  // Once a day: does the token this refresh replaced still work? That decides what a probe proves (rule 3).
  await lookAtReplacedAccessToken(installRowId, grant);
  return {
    accessToken: tokens.accessToken,
    expiresAt: new Date(sentAt.getTime() + tokens.expiresIn * 1000),
    version: stored.version + 1,
  };
}

/**
 * What a refresh re-sent after a lost answer rests on (rule 3): the old access token still worked
 * (`probe_alive`), or it had expired and nothing could tell (`unprovable`).
 */
type ResendBasis = "probe_alive" | "unprovable";

/**
 * The state change's detail when a re-sent refresh token is refused: what the app knows, for staff.
 * It begins with REFRESH_ANSWER_LOST, which the operator's page reads (lib/installs/dashboard.ts).
 */
function resendRefusedDetail(basis: ResendBasis, refusal: string): string {
  const evidence =
    basis === "probe_alive"
      ? "the previous access token still worked, which proves the refresh never happened only where the identity provider revokes replaced access tokens (as it was seen to)"
      : "the previous access token had expired, so nothing could tell whether the refresh happened";
  return (
    `${REFRESH_ANSWER_LOST}; ${evidence}; the refresh token was sent once more and refused (${refusal}): ` +
    "most likely the earlier refresh succeeded and its answer was lost (or the install was removed at the service meanwhile); the operator must reconnect from the portal"
  );
}

/**
 * The state change's detail when the newest refresh token, sent for the first time, is refused. The
 * operator's page words the same (lib/installs/dashboard.ts reads no more than the cause).
 */
function firstSendRefusedDetail(refusal: string): string {
  return (
    `refresh refused (${refusal}) to the newest refresh token, sent for the first time: most likely the operator uninstalled the app ` +
    "and its install.revoked was not received (or the token was used elsewhere); a replay of that delivery would mark the install revoked"
  );
}

/** A token endpoint's refusal as the app stores it: its kind and HTTP status, never the identity provider's error_description (free text from outside). */
function refusalOf(error: TokenEndpointError): string {
  return `${error.kind}${error.status ? `, HTTP ${error.status}` : ""}`;
}

async function handleRefreshFailure(installRowId: string, error: unknown, resend: ResendBasis | null, attempt: RefreshAttemptNote): Promise<never> {
  if (error instanceof TokenEndpointError) {
    // The kind and status only: error_description is the identity provider's free text (rule 4).
    const kind = `${error.kind}${error.status ? ` HTTP ${error.status}` : ""}`;
    switch (error.kind) {
      case "invalid_grant":
        note(attempt, "refused", resend ? `invalid_grant to a resend after a lost answer (${resend})` : "invalid_grant");
        // contract §7: the refresh token was replayed or the install revoked: only a re-install helps.
        // After a lost answer, "replayed" is most likely the app's own resend (rule 3): say so.
        // Otherwise this token was the newest and sent for the first time, so the app replayed nothing:
        // most likely an uninstall whose install.revoked never arrived (A209).
        await moveToReinstallNeeded(installRowId, resend ? resendRefusedDetail(resend, refusalOf(error)) : firstSendRefusedDetail(refusalOf(error)));
        throw new NoUsableTokenError("reinstall_needed");
      case "invalid_client":
        // The client itself was refused, so the refresh token was not looked at.
        note(attempt, "circuit_open", "invalid_client: the circuit opened");
        await clearRefreshMarker(db(), installRowId);
        await openTokenCircuit(`refresh refused (${refusalOf(error)})`);
        throw new TokenCircuitOpenError();
      case "not_sent":
      case "rejected":
        // Turned away before the token was looked at: nothing was spent.
        note(attempt, "not_sent", kind);
        await clearRefreshMarker(db(), installRowId);
        throw new TokenRefreshUnavailableError(`the refresh was not processed (${refusalOf(error)})`);
      default:
        // unavailable, invalid_request, bad_response, other: the token may have been spent.
        // The marker stays; a later attempt settles the outcome before sending anything.
        note(attempt, "unknown", kind);
        logger.warn({ installRowId, kind: error.kind, status: error.status }, "refresh outcome unknown; it will be settled before any retry");
        throw new TokenRefreshUnavailableError(`refresh outcome unknown (${error.kind})`);
    }
  }
  note(attempt, "unknown", "the request failed unexpectedly");
  throw error;
}

/**
 * See rule 3 at the top of this file. Returns what a refresh sent now rests on; throws when the
 * install is lost or the outcome cannot be settled yet.
 */
async function settleUnknownRefresh(
  installRowId: string,
  grant: GrantForUse,
  noteOutcome: NoteOutcome,
  attempt: RefreshAttemptNote,
): Promise<ResendBasis | StoredAccessToken> {
  const startedAt = grant.refreshStartedAt!;
  if (Date.now() - startedAt.getTime() < settleAfterMs()) {
    // The earlier attempt could still be answered, or still be storing its answer: wait it out.
    note(attempt, "settling", "an earlier refresh is still settling; nothing was sent");
    throw new TokenRefreshUnavailableError("an earlier refresh is still settling");
  }
  if (grant.expiresAt.getTime() <= Date.now()) {
    logger.warn({ installRowId }, "an earlier refresh's outcome cannot be proven (the old access token expired); trying the refresh once more");
    await clearRefreshMarker(db(), installRowId);
    return "unprovable";
  }
  const verdict = await probeOldAccessToken(installRowId, grant.accessToken);
  if (verdict === "spent") {
    note(attempt, "lost", "the previous access token is refused (401): an earlier refresh's answer was lost");
    await moveToReinstallNeeded(
      installRowId,
      `${REFRESH_ANSWER_LOST}; the previous access token is refused (401), so the refresh most likely succeeded and its new pair is lost (or the install was removed at the service meanwhile); the operator must reconnect from the portal`,
    );
    throw new NoUsableTokenError("reinstall_needed");
  }
  if (verdict === "unknown") {
    note(attempt, "settling", "the probe of the previous access token told nothing; nothing was sent");
    throw new TokenRefreshUnavailableError("could not settle an earlier refresh's outcome");
  }
  if ((await oldAccessTokensAfterRefresh()) !== "revoked") {
    // Not proof here (rule 3): the refresh may have happened, and a resend would revoke the grant.
    await db().$transaction(async (tx) => {
      if (await markRefreshAnswerLost(tx, installRowId, grant.version)) await alertOnRefreshAnswerLost(tx, installRowId, grant.expiresAt);
    });
    logger.warn({ installRowId, reconnectBy: grant.expiresAt }, "an earlier refresh's outcome cannot be proven here; its refresh token is not sent again, the old access token serves until the operator reconnects");
    return serveUntilReconnect(installRowId, grant, noteOutcome, attempt);
  }
  logger.info({ installRowId }, "the old access token still works after an unknown refresh, and this identity provider revokes replaced tokens: the refresh never happened; sending the refresh token once more");
  await clearRefreshMarker(db(), installRowId);
  return "probe_alive";
}

/**
 * An install whose refresh token is never sent again (rule 3): the old access token serves while it
 * lasts; once it has expired, only the operator's reconnect helps (the page and the alert say so).
 */
async function serveUntilReconnect(installRowId: string, grant: GrantForUse, noteOutcome: NoteOutcome, attempt: RefreshAttemptNote): Promise<StoredAccessToken> {
  if (grant.expiresAt.getTime() > Date.now()) {
    noteOutcome("not_needed");
    note(attempt, "lost", "an earlier refresh's answer was lost and nothing proves it never happened: the previous access token serves until the operator reconnects; nothing was sent");
    return { accessToken: grant.accessToken, expiresAt: grant.expiresAt, version: grant.version };
  }
  note(attempt, "lost", "the previous access token expired before the operator reconnected; nothing was sent");
  await moveToReinstallNeeded(
    installRowId,
    `${REFRESH_ANSWER_LOST}; the previous access token still worked, which does not prove the refresh never happened at this identity provider, so the refresh token was not sent again (a reuse would revoke the grant); that access token has now expired: the operator must reconnect from the portal`,
  );
  throw new NoUsableTokenError("reinstall_needed");
}

/**
 * Whether the access token issued before an unsettled refresh still works. Only an answer that
 * shows the token was accepted counts as "alive": a 2xx (even with a body the app does not
 * understand) or a 403 NEEDS_REAUTH, which the service gives only to a valid token. A 429 or a
 * plain 403 may come from in front of the token check, so they prove nothing.
 */
async function probeOldAccessToken(installRowId: string, accessToken: string): Promise<"alive" | "spent" | "unknown"> {
  try {
    await fetchConsumer(accessToken, callFor(installRowId));
    return "alive";
  } catch (error) {
    if (!(error instanceof PartnerApiError)) return "unknown";
    if (error.kind === "unauthorized") return "spent";
    if (error.kind === "needs_reauth") return "alive";
    if (error.kind === "bad_response" && error.status !== undefined && error.status < 300) return "alive";
    return "unknown";
  }
}

/** Stops all use of the install's tokens, in one transaction with clearing the marker. */
async function moveToReinstallNeeded(installRowId: string, detail: string): Promise<void> {
  await db().$transaction(async (tx) => {
    await transitionInstall(tx, installRowId, "REINSTALL_NEEDED", "refresh", detail);
    // Only after the status blocks every use: the marker no longer protects anything.
    await clearRefreshMarker(tx, installRowId);
  });
  logger.warn({ installRowId, detail }, "install needs a re-install");
}

async function commitWithRetry<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await retryWhileDatabaseUnavailable(write, COMMIT_RETRY_MS, () => logger.warn("the database did not take the refreshed tokens; retrying"));
  } catch (error) {
    logger.error({ err: error }, "the refreshed tokens could not be stored; the refresh marker stays set");
    throw new TokenRefreshUnavailableError("the database is unavailable");
  }
}
