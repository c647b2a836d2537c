// The refresh history: one row per attempt of the refresh coordinator (refresh.ts), whatever came of
// it, so staff can read an install's refreshes in its timeline (lib/admin/timeline.ts): the refused
// and the unknown ones too, not only the last success that the grant remembers.
//
// Three rules keep it off the refresh's back:
//  - one statement per attempt, after its outcome is known and after the install's refresh lock is let
//    go (refresh.ts `refreshInstallTokens`), however many callers shared the attempt;
//  - a failure to write it is logged and swallowed: the history must never fail a refresh, or turn a
//    stored token pair into an error;
//  - nothing from outside goes in: the outcome is one of the words below and the detail is the app's
//    own (an error's kind and HTTP status), never a token, a code, or the identity provider's
//    error_description (contract §7 lets it say anything).
//
// History of what happened, not of every routine hour (issue 34): an active install refreshes about
// once an hour (the 1-hour access token, contract §3), almost always "refreshed" with nothing to say.
// Such an attempt folds into the install's latest row when that row is the same routine success
// (same outcome, no detail) begun in the last 24 hours: `attempts` counts them, `last_attempted_at`
// and the duration, host and pid are the latest's. Every other outcome, and the first success after
// one, gets its own row, so the timeline still shows each failure where it happened. About one row
// per active install a day instead of 24 (`npm run bench -- storage`; docs/spec-gaps.md A196).
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

/** The routine successes that fold into one row a day (see the top of this file). */
const FOLDED: ReadonlySet<RefreshAttemptOutcome> = new Set(["refreshed", "not_needed"]);

/** Writes the attempt's row. Never throws: a history that cannot be written must not fail the refresh. */
export async function recordRefreshAttempt(installRowId: string, startedAt: Date, outcome: RefreshAttemptOutcome, detail: string | null): Promise<void> {
  const durationMs = Math.max(0, Date.now() - startedAt.getTime());
  try {
    if (detail === null && FOLDED.has(outcome)) {
      // One statement: fold into the latest row if it is a routine success of the same kind from the
      // last day, else insert. Two attempts recorded at once may both insert; that costs a row, never
      // an attempt.
      await db().$executeRaw`
        WITH latest AS (
          SELECT id, outcome, detail, attempted_at FROM refresh_attempts
          WHERE install_row_id = ${installRowId}::uuid ORDER BY attempted_at DESC, id DESC LIMIT 1
        ), folded AS (
          UPDATE refresh_attempts r
          SET attempts = r.attempts + 1, last_attempted_at = GREATEST(COALESCE(r.last_attempted_at, r.attempted_at), ${startedAt}),
              duration_ms = ${durationMs}, host = ${HOST}, pid = ${process.pid}
          FROM latest
          WHERE r.id = latest.id AND latest.outcome = ${outcome} AND latest.detail IS NULL
            AND latest.attempted_at > ${startedAt}::timestamptz - interval '1 day'
          RETURNING r.id
        )
        INSERT INTO refresh_attempts (install_row_id, attempted_at, duration_ms, outcome, host, pid)
        SELECT ${installRowId}::uuid, ${startedAt}, ${durationMs}, ${outcome}, ${HOST}, ${process.pid}
        WHERE NOT EXISTS (SELECT 1 FROM folded)`;
      return;
    }
    await db().refreshAttempt.create({
      data: { installRowId, attemptedAt: startedAt, durationMs, outcome, detail: detail?.slice(0, 300) ?? null, host: HOST, pid: process.pid },
    });
  } catch (error) {
    logger.warn({ installRowId, outcome, err: error }, "the refresh history could not be written; the refresh itself is not affected");
  }
}
