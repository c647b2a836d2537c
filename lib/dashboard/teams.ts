// The Teams section: the operator's teams from the install's local copy (synced_teams, written by
// lib/sync/teams.ts), and the template's worked example of a write: renaming a team at the service.
//
// The write is a feature the app turns on (DASHBOARD_MANAGE_TEAMS), because it needs a wider scope
// than the app requests as shipped (contract §2: the narrowest scopes). Turning it on is half the
// story: the app owner adds `teams:write` to the app's registered scopes at the service, which flags
// every install NEEDS_REAUTH (contract §3); each operator re-consents, and from then on their grant
// includes `teams:write` and the page offers the rename.
import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { grantsResource } from "@/lib/installs/scopes";
import { fetchInstallSummary, type InstallSummary } from "@/lib/installs/dashboard";
import { renameTeam } from "@/lib/partner-api/client";
import { loadFreshness, type ResourceFreshness } from "./freshness";
import { callLive, type LiveFailure } from "./live-call";

/** The scope the write needs (contract §2: write must be requested explicitly). */
export const TEAMS_WRITE_SCOPE = "teams:write";

/** Teams per operator are few (public-facts.md); the bound only keeps one odd operator from filling a page. */
const MAX_TEAMS_SHOWN = 500;

/** `updatedAt`: when the team last changed AT THE SERVICE (its record's `updatedAt`), null when not given. */
export type TeamListItem = { id: string; name: string | null; type: string | null; updatedAt: Date | null };

/**
 * The team's own `updatedAt` (public-facts.md "Team"), from the record as the service sent it. The
 * copy's `updated_at` column is when the APP's copy last changed (a sync's date), which is not what
 * an operator means by "changed", so it is never shown as the team's date (A133).
 */
const TeamDatesSchema = z.object({ updatedAt: z.iso.datetime({ offset: true }) });
export function teamChangedAt(raw: unknown): Date | null {
  const parsed = TeamDatesSchema.safeParse(raw);
  return parsed.success ? new Date(parsed.data.updatedAt) : null;
}

/**
 * Whether this install may rename teams:
 * - `off`: the app's configuration does not offer the feature (as shipped);
 * - `not_granted`: the feature is on, but this install's grant lacks teams:write (the app owner has
 *   not widened the registration yet, or the operator has not re-consented);
 * - `granted`: the form is offered.
 */
export type TeamsWriteState = "off" | "not_granted" | "granted";

export type TeamsView = {
  /** Whether the install granted any teams scope at all (contract §2: `teams`, `teams:read`, `teams:write`). */
  readable: boolean;
  freshness: ResourceFreshness;
  teams: TeamListItem[];
  write: TeamsWriteState;
};

export function teamsWriteState(grantedScopes: readonly string[]): TeamsWriteState {
  if (env().DASHBOARD_MANAGE_TEAMS !== "on") return "off";
  return grantedScopes.includes(TEAMS_WRITE_SCOPE) ? "granted" : "not_granted";
}

/** The Teams page's data: the local copy, how fresh it is, and whether the rename is offered. */
export async function loadTeams(install: Pick<InstallSummary, "id" | "grantedScopes">): Promise<TeamsView> {
  const [freshness, rows] = await Promise.all([
    loadFreshness(install.id),
    // Primary key (install_row_id, external_id) prefix: an index read of this install's rows only.
    db().syncedTeam.findMany({
      where: { installRowId: install.id, deletedAt: null },
      select: { externalId: true, name: true, type: true, raw: true },
      orderBy: [{ name: "asc" }, { externalId: "asc" }],
      take: MAX_TEAMS_SHOWN,
    }),
  ]);
  return {
    readable: grantsResource(install.grantedScopes, "teams"),
    freshness: freshness.teams,
    teams: rows.map((row) => ({ id: row.externalId, name: row.name, type: row.type, updatedAt: teamChangedAt(row.raw) })),
    write: teamsWriteState(install.grantedScopes),
  };
}

/**
 * What the rename form sends. The same limits as the service's (sandbox/README.md decision 45), so
 * an operator hears about a bad name before a request is spent on it.
 */
export const RenameTeamInputSchema = z.object({
  teamId: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, "Pick a team from the list."),
  name: z
    .string({ message: "Type a name." })
    .trim()
    .min(1, "Type a name.")
    .max(100, "A team name has at most 100 characters.")
    .refine((name) => !/\p{Cc}/u.test(name), "A team name cannot contain control characters."),
});

export type RenameTeamOutcome =
  | { ok: true; team: { id: string; name: string } }
  | {
      ok: false;
      reason: "invalid" | "feature_off" | "not_active" | "needs_reauth" | "not_granted" | "unknown_team" | "service_refused" | "failed";
      /** invalid: what is wrong with the input; service_refused: the service's explanation. */
      message?: string;
      /** failed: how the call failed (rate_limited, unavailable, timeout...). */
      failure?: LiveFailure;
    };

/**
 * Renames one of the install's teams at the service, then in the local copy, so the page shows the
 * new name at once (the next sync pass finds the same record and changes nothing). The caller has
 * checked who is asking (the action's session); this checks everything else, in order: the input,
 * the feature, the install's state and grant, and that the team is this install's.
 */
export async function renameTeamForInstall(installRowId: string, input: unknown): Promise<RenameTeamOutcome> {
  const parsed = RenameTeamInputSchema.safeParse(input);
  if (!parsed.success) return { ok: false, reason: "invalid", message: parsed.error.issues[0]?.message ?? "Check the name." };
  const { teamId, name } = parsed.data;

  if (env().DASHBOARD_MANAGE_TEAMS !== "on") return { ok: false, reason: "feature_off" };
  const install = await fetchInstallSummary(installRowId);
  if (!install || install.status !== "ACTIVE") return { ok: false, reason: install?.status === "NEEDS_REAUTH" ? "needs_reauth" : "not_active" };
  // contract §2: the app asks only for what the operator granted; a call without the scope would be refused anyway.
  if (!install.grantedScopes.includes(TEAMS_WRITE_SCOPE)) return { ok: false, reason: "not_granted" };

  // The form names a team by id: it must be one this install's copy holds, never another operator's.
  const team = await db().syncedTeam.findFirst({ where: { installRowId, externalId: teamId, deletedAt: null }, select: { externalId: true } });
  if (!team) return { ok: false, reason: "unknown_team" };

  const result = await callLive(installRowId, "rename team", (token, call) => renameTeam(token, call, teamId, name));
  if (!result.ok) {
    const { failure } = result;
    if (failure.kind === "needs_reauth") return { ok: false, reason: "needs_reauth" };
    // A plain 403: the service does not see teams:write in this install's grant.
    if (failure.kind === "forbidden") return { ok: false, reason: "not_granted" };
    if (failure.kind === "not_found") return { ok: false, reason: "unknown_team" };
    if (failure.kind === "bad_request") return { ok: false, reason: "service_refused", message: failure.serviceMessage };
    return { ok: false, reason: "failed", failure };
  }

  const record = result.data;
  const newName = record.name ?? name;
  // The service's record as it now lists it, so the copy matches what the next sync pass will read.
  await db().syncedTeam.updateMany({
    where: { installRowId, externalId: teamId },
    data: { name: newName, ...(record.type ? { type: record.type } : {}), raw: record as object, updatedAt: new Date() },
  });
  return { ok: true, team: { id: teamId, name: newName } };
}
