// The refresh history: one row per attempt of the refresh coordinator (refresh.ts), whatever came of
// it, so staff can read an install's refreshes in its timeline (lib/admin/timeline.ts): the refused
// and the unknown ones too, not only the last success that the grant remembers.
//
// Three rules keep it off the refresh's back:
//  - one insert per attempt, after its outcome is known and after the install's refresh lock is let go
//    (refresh.ts `refreshInstallTokens`), however many callers shared the attempt;
//  - a failure to write it is logged and swallowed: the history must never fail a refresh, or turn a
//    stored token pair into an error;
//  - nothing from outside goes in: the outcome is one of the words below and the detail is the app's
//    own (an error's kind and HTTP status), never a token, a code, or the identity provider's
//    error_description (contract §7 lets it say anything).
import "server-only";
import { hostname } from "node:os";
import { db } from "@/lib/db/client";
import { logger } from "@/lib/log";

/**
 * What became of one attempt (the console's words for each are in lib/admin/timeline.ts):
 *
 *   refreshed         a new pair was stored
 *   not_needed        another request or instance had refreshed already (rule 1 in refresh.ts)
 *   discarded         refreshed, but the grant changed meanwhile (a new consent, a revocation): the pair was dropped
 *   refused           invalid_grant: the refresh token is no longer accepted (contract §7)
 *   lost              an earlier refresh's answer was lost and its token is spent (rule 3)
 *   unknown           sent, and the outcome is not known (a timeout, a 5xx, a lost answer): the marker stays
 *   not_sent          turned away before the token was looked at: nothing spent
 *   settling          an earlier attempt with an unknown outcome is still being settled: nothing sent
 *   circuit_open      invalid_client opened the token circuit, or it was open already (circuit.ts)
 *   unavailable       nothing was sent: the identity provider could not be discovered, the lock or the database failed
 *   unusable          the install has no usable grant (uninstalled, not connected)
 *   reinstall_needed  no refresh token is stored: only a re-install helps
 *   error             anything else (a bug): the log has it
 */
export const REFRESH_ATTEMPT_OUTCOMES = [
  "refreshed",
  "not_needed",
  "discarded",
  "refused",
  "lost",
  "unknown",
  "not_sent",
  "settling",
  "circuit_open",
  "unavailable",
  "unusable",
  "reinstall_needed",
  "error",
] as const;

export type RefreshAttemptOutcome = (typeof REFRESH_ATTEMPT_OUTCOMES)[number];

/** What the refresh code says about the attempt as it goes; the last word counts. */
export type RefreshAttemptNote = { outcome?: RefreshAttemptOutcome; detail?: string };

const HOST = hostname().slice(0, 200);

/** Writes the attempt's row. Never throws: a history that cannot be written must not fail the refresh. */
export async function recordRefreshAttempt(installRowId: string, startedAt: Date, outcome: RefreshAttemptOutcome, detail: string | null): Promise<void> {
  try {
    await db().refreshAttempt.create({
      data: {
        installRowId,
        attemptedAt: startedAt,
        durationMs: Math.max(0, Date.now() - startedAt.getTime()),
        outcome,
        detail: detail?.slice(0, 300) ?? null,
        host: HOST,
        pid: process.pid,
      },
    });
  } catch (error) {
    logger.warn({ installRowId, outcome, err: error }, "the refresh history could not be written; the refresh itself is not affected");
  }
}
