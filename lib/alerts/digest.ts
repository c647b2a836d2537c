// Alerts that do not storm: a change that hits many installs at once sends one digest, not one alert
// per install (docs/operations.md "Alerts", register A117).
//
// The identity provider refusing or failing every refresh, an outage of the service's API, or a
// widening of the app's scopes (contract §7: every install gets 403 NEEDS_REAUTH) moves thousands of
// installs into the same trouble within minutes. One alert each would bury the one that matters, and
// page someone thousands of times for one cause. So the per-install alerts are counted per type, in a
// window (a row of alert_digests):
//
//   - a window opens with the type's first alert after a quiet spell and lasts
//     ALERT_DIGEST_WINDOW_SECONDS; its first ALERT_DIGEST_THRESHOLD alerts are sent on their own, as
//     they always were (a single install's trouble is not delayed by a moment);
//   - the next one fires ONE digest alert (`digest.firing`: the type, how many so far, a sample of
//     installs) and is held; every later alert of the type is held too, for as long as they keep
//     coming (each within the window of the one before);
//   - a held install's recovery is held as well (its firing alert was never sent on its own); when
//     every held install has recovered, been uninstalled, or moved on to another trouble, ONE recovery
//     digest (`digest.recovered`) says so, with the totals. The installs alerted on their own before the
//     threshold recover on their own, so every incident a receiver opened is closed.
//
// A lost refresh answer (lib/oauth/refresh.ts, rule 3) is folded from the first one: a crash in the
// middle of refreshes loses every answer in flight at once, and the restarted app finds them one by
// one as it settles each install, over minutes. So the first lost answer of a quiet spell is alerted
// on its own (install.reinstall_needed or install.reconnect_needed, as always), saying that it stands
// for the incident; every later one while they keep coming (each within ALERT_DIGEST_WINDOW_SECONDS of
// the one before) joins it silently, and one recovery (install.recovered, on the first alert's
// incident) follows when every install of the incident has recovered, been uninstalled or moved on
// (A217). One incident, one alert and one recovery, however many installs.
//
// Only the outbound notifications are folded: each install's own state (its status, its sync
// incident in alert_incidents) changes exactly as before, and the console shows it.
//
// Concurrency: everything happens in the transaction of the state change (raise.ts), and the
// decision for a type is taken under a transaction-level advisory lock on the type, then the window's
// row lock: however many workers raise at once, exactly one of them crosses the threshold and fires
// the digest, and exactly one resolves the last held install and sends the recovery.
import "server-only";
import type { Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { describeInstall, type AlertDraft, type AlertInstall, type AlertType } from "./alert";
import { raiseAlert } from "./raise";

/** The per-install trouble types a storm folds. client.* alerts are one per client already. */
const FOLDED: ReadonlySet<AlertType> = new Set(["install.needs_reauth", "install.reinstall_needed", "install.reconnect_needed", "sync.failing"]);

/** How many installs a digest names, so staff can open a few of them in the console. */
const SAMPLE_SIZE = 10;

/**
 * A per-install alert: its incident is `install:<row id>` or `sync:<row id>` (incidents.ts).
 * `lostRefreshAnswer`: the trouble is a refresh's lost answer (folded per incident, above).
 */
export type InstallAlertDraft = AlertDraft & { install: AlertInstall; lostRefreshAnswer?: boolean };

/** The alert_digests type of a lost-answer incident: not an alert type, so no storm window is ever confused with it. */
const LOST_ANSWERS = "refresh.answer_lost";

type WindowRow = { id: string; alerts: number; held: number; fired_at: Date | null };
type ClosedRow = { id: string; type: string; alerts: number; held: number; fired_at: Date | null };

/**
 * Raises a per-install alert in `tx`, unless a storm of its type folds it into a digest. A trouble
 * (install.needs_reauth, install.reinstall_needed, sync.failing) counts toward its type's window; a
 * recovery (install.recovered, install.revoked, sync.recovered) is held when its trouble was.
 */
export async function raiseInstallAlert(tx: Tx, draft: InstallAlertDraft): Promise<void> {
  const trouble = FOLDED.has(draft.type);
  // A trouble: one decision at a time per type (or per lost-answer incident), until this transaction
  // commits (A117: exactly one digest). Taken before any digest row is touched, so every transaction
  // takes at most one such lock and then rows: no two can wait on each other in a cycle.
  const lockName = draft.lostRefreshAnswer ? LOST_ANSWERS : draft.type;
  if (trouble) await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended(${`alert-digest:${lockName}`}, 0))`;
  const now = new Date();
  // A lost answer of an install already in an open lost-answer incident (its reconnect was due, then
  // its token expired): the same incident, already alerted.
  if (draft.lostRefreshAnswer && (await inOpenLostAnswerIncident(tx, draft.incident))) return;
  // Whatever this alert is, an earlier held trouble of the same incident is over for its digest:
  // recovered, uninstalled, or moved on (NEEDS_REAUTH, then REINSTALL_NEEDED).
  const wasHeld = await resolveHeld(tx, draft, now);
  if (!trouble) {
    // A recovery: sent on its own only if its trouble was (a receiver never saw a held one open).
    if (!wasHeld) await raiseAlert(tx, draft);
    return;
  }
  if (draft.lostRefreshAnswer) await joinLostAnswerIncident(tx, draft, now);
  else await countTrouble(tx, draft, now);
}

async function inOpenLostAnswerIncident(tx: Tx, incident: string): Promise<boolean> {
  const rows = await tx.$queryRaw<{ found: number }[]>`
    SELECT 1 AS found FROM alert_digest_members m JOIN alert_digests d ON d.id = m.digest_id
    WHERE m.incident = ${incident} AND m.held AND m.resolved_at IS NULL AND d.type = ${LOST_ANSWERS} AND d.closed_at IS NULL
    LIMIT 1`;
  return rows.length > 0;
}

/**
 * A lost answer joins the lost-answer incident under way (one whose last lost answer came within the
 * window), or opens one with its own alert, which says that it stands for the incident. Every member
 * is held: the incident's one recovery waits for all of them (resolveHeld).
 */
async function joinLostAnswerIncident(tx: Tx, draft: InstallAlertDraft, now: Date): Promise<void> {
  const windowSeconds = env().ALERT_DIGEST_WINDOW_SECONDS;
  const since = new Date(now.getTime() - windowSeconds * 1000);
  const [current] = await tx.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM alert_digests
    WHERE type = ${LOST_ANSWERS} AND closed_at IS NULL AND last_alert_at > ${since}
    ORDER BY window_started_at DESC LIMIT 1
    FOR UPDATE`;
  if (current) {
    await tx.$executeRaw`UPDATE alert_digests SET alerts = alerts + 1, held = held + 1, last_alert_at = ${now} WHERE id = ${current.id}::uuid`;
    await addMember(tx, current.id, draft, true, now);
    return;
  }
  const [opened] = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO alert_digests (id, type, window_started_at, last_alert_at, alerts, held, fired_at)
    VALUES (gen_random_uuid(), ${LOST_ANSWERS}, ${now}, ${now}, 1, 1, ${now}) RETURNING id::text`;
  await addMember(tx, opened!.id, draft, true, now);
  const within = windowSeconds % 60 === 0 ? `${windowSeconds / 60} min` : `${windowSeconds} s`;
  await raiseAlert(tx, {
    ...draft,
    summary: `${draft.summary} Lost answers of other installs within ${within} of each other (a crash mid-refresh) join this alert; one recovery follows when all have recovered.`,
    details: { ...draft.details, lostAnswersWindowSeconds: windowSeconds },
  });
}

/** Counts a trouble in its type's window, under the type's advisory lock (raiseInstallAlert). */
async function countTrouble(tx: Tx, draft: InstallAlertDraft, now: Date): Promise<void> {
  const { ALERT_DIGEST_THRESHOLD: threshold, ALERT_DIGEST_WINDOW_SECONDS: windowSeconds } = env();
  const since = new Date(now.getTime() - windowSeconds * 1000);
  // The type's current window: opened within the window, or a fired digest whose alerts keep coming.
  // FOR UPDATE: a recovery closing it meanwhile is seen (the row drops out, and a new window opens).
  const [current] = await tx.$queryRaw<WindowRow[]>`
    SELECT id::text, alerts, held, fired_at FROM alert_digests
    WHERE type = ${draft.type} AND closed_at IS NULL
      AND (window_started_at > ${since} OR (fired_at IS NOT NULL AND last_alert_at > ${since}))
    ORDER BY window_started_at DESC LIMIT 1
    FOR UPDATE`;

  if (!current) {
    const [opened] = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO alert_digests (id, type, window_started_at, last_alert_at, alerts)
      VALUES (gen_random_uuid(), ${draft.type}, ${now}, ${now}, 1) RETURNING id::text`;
    await addMember(tx, opened!.id, draft, false, now);
    await raiseAlert(tx, draft);
    return;
  }

  const alerts = current.alerts + 1;
  const fires = current.fired_at === null && alerts > threshold;
  const held = current.fired_at !== null || fires;
  await tx.$executeRaw`
    UPDATE alert_digests SET alerts = ${alerts}, last_alert_at = ${now},
      held = held + ${held ? 1 : 0}, fired_at = COALESCE(fired_at, ${fires ? now : null}::timestamptz(3))
    WHERE id = ${current.id}::uuid`;
  await addMember(tx, current.id, draft, held, now);
  if (!held) {
    await raiseAlert(tx, draft);
    return;
  }
  if (fires) {
    const sample = await sampleOf(tx, current.id);
    const within = windowSeconds % 60 === 0 ? `${windowSeconds / 60} minute${windowSeconds === 60 ? "" : "s"}` : `${windowSeconds} seconds`;
    await raiseAlert(tx, {
      type: "digest.firing",
      incident: digestIncident(current.id),
      summary:
        `${alerts} installs entered ${draft.type} within ${within} (more than ${threshold}): one cause hits many installs at once ` +
        `(the identity provider or the service failing, the app's scopes widened). The first ${alerts - 1} were alerted on their own; ` +
        `from now on this digest stands for the rest, and one recovery digest follows when every held install has recovered.`,
      details: { kind: draft.type, installs: alerts, alertedAlone: alerts - 1, held: 1, windowSeconds, sample },
    });
  }
}

async function addMember(tx: Tx, digestId: string, draft: InstallAlertDraft, held: boolean, now: Date): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO alert_digest_members (digest_id, incident, install_row_id, held, joined_at)
    VALUES (${digestId}::uuid, ${draft.incident}, ${draft.install.rowId}::uuid, ${held}, ${now})`;
}

/** The first installs the window counted (their row ids: the console's address for each). */
async function sampleOf(tx: Tx, digestId: string): Promise<string> {
  const rows = await tx.$queryRaw<{ install_row_id: string }[]>`
    SELECT install_row_id::text FROM alert_digest_members WHERE digest_id = ${digestId}::uuid ORDER BY id LIMIT ${SAMPLE_SIZE}`;
  return rows.map((row) => row.install_row_id).join(", ");
}

/**
 * Marks the incident's held trouble (if any) as over, and closes each digest whose last held install
 * this was, with its recovery digest. Returns whether the incident had a held trouble.
 */
async function resolveHeld(tx: Tx, draft: InstallAlertDraft, now: Date): Promise<boolean> {
  const { incident } = draft;
  const resolved = await tx.$queryRaw<{ digest_id: string }[]>`
    UPDATE alert_digest_members SET resolved_at = ${now}
    WHERE incident = ${incident} AND held AND resolved_at IS NULL
    RETURNING digest_id::text`;
  for (const { digest_id: digestId } of resolved) {
    // Under the digest's row lock: of all the recoveries, exactly one sees the count reach `held`.
    const [closed] = await tx.$queryRaw<ClosedRow[]>`
      UPDATE alert_digests SET resolved = resolved + 1,
        closed_at = CASE WHEN resolved + 1 >= held THEN ${now}::timestamptz(3) END
      WHERE id = ${digestId}::uuid AND closed_at IS NULL
      RETURNING id::text, type, alerts, held, fired_at, closed_at IS NOT NULL AS closed`.then((rows) =>
      (rows as (ClosedRow & { closed: boolean })[]).filter((row) => row.closed),
    );
    if (!closed) continue;
    if (closed.type === LOST_ANSWERS) {
      await resolveLostAnswerIncident(tx, closed, draft);
      continue;
    }
    const sample = await sampleOf(tx, closed.id);
    await raiseAlert(tx, {
      type: "digest.recovered",
      incident: digestIncident(closed.id),
      summary:
        `All ${closed.held} installs held in the ${closed.type} digest have recovered, were uninstalled, or moved on: ` +
        `${closed.alerts} entered ${closed.type} in all; the ${closed.alerts - closed.held} alerted on their own are resolved on their own.`,
      details: {
        kind: closed.type,
        installs: closed.alerts,
        alertedAlone: closed.alerts - closed.held,
        held: closed.held,
        firedAt: closed.fired_at?.toISOString() ?? null,
        sample,
      },
    });
  }
  return resolved.length > 0;
}

/**
 * The one recovery of a lost-answer incident, on the incident of the alert that opened it. With one
 * install, it is that install's own recovery (or uninstall), as it would be unfolded. When that first
 * install has moved on to another trouble, nothing is sent: that trouble alerted on the same incident,
 * and its own recovery closes it.
 */
async function resolveLostAnswerIncident(tx: Tx, closed: ClosedRow, draft: InstallAlertDraft): Promise<void> {
  const trouble = FOLDED.has(draft.type);
  if (closed.held === 1) {
    if (!trouble) await raiseAlert(tx, draft);
    return;
  }
  const [first] = await tx.$queryRaw<{ incident: string; row_id: string; install_id: number | null; operator_id: string; operator_name: string | null; status: string }[]>`
    SELECT m.incident, i.id::text AS row_id, i.install_id, i.operator_id, i.operator_name, i.status::text
    FROM alert_digest_members m JOIN installs i ON i.id = m.install_row_id
    WHERE m.digest_id = ${closed.id}::uuid ORDER BY m.id LIMIT 1`;
  if (!first || first.status === "NEEDS_REAUTH" || first.status === "REINSTALL_NEEDED") return;
  const install: AlertInstall = { rowId: first.row_id, installId: first.install_id, operatorId: first.operator_id, operatorName: first.operator_name };
  await raiseAlert(tx, {
    type: "install.recovered",
    incident: first.incident,
    summary: `${describeInstall(install)} and the ${closed.held - 1} other installs whose refresh answers were lost in the same incident have recovered, were uninstalled, or moved on.`,
    install,
    details: { cause: "lost_answers_resolved", installs: closed.held, sample: await sampleOf(tx, closed.id) },
  });
}

/** Pairs a digest with its recovery digest. */
const digestIncident = (digestId: string) => `digest:${digestId}`;
