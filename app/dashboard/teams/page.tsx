// /dashboard/teams: the operator's teams from the install's local copy (lib/dashboard/teams.ts), and,
// when the app's "manage teams" feature is on and the operator granted teams:write, a rename per team.
import type { Metadata } from "next";
import { currentOperator } from "@/lib/auth/operator-session";
import { loadDashboardInstall, showsLocalCopy } from "@/lib/installs/dashboard";
import { loadTeams, type TeamsView } from "@/lib/dashboard/teams";
import { dashboardI18n } from "@/lib/i18n/request";
import { RenameTeamForm } from "./rename-team-form";

export const metadata: Metadata = { title: "Teams" };

export const dynamic = "force-dynamic";

/** public-facts.md "Team": type is private | professional | operator; anything else is shown as given. */
const TEAM_TYPES: Record<string, string> = {
  private: "Private",
  professional: "Professional",
  operator: "Operator",
};

export default async function TeamsPage() {
  // A page must not rely on its layout for authorization: re-read the session and the install.
  const operator = await currentOperator();
  const install = operator ? await loadDashboardInstall(operator.installRowId) : null;
  if (!install || !showsLocalCopy(install.status)) return null;
  const view = await loadTeams(install);
  // While re-authorization is pending the list is the copy, read-only: the rename would call the API
  // (contract §7), so it is not offered (renameTeamForInstall refuses it too).
  const paused = install.status !== "ACTIVE";

  return (
    <section className="space-y-4" aria-labelledby="teams-heading">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 id="teams-heading" className="text-xl font-semibold">
          Teams
        </h1>
        <AsOf view={view} />
      </div>
      <WriteNote view={view} paused={paused} />
      <TeamList view={view} paused={paused} />
    </section>
  );
}

async function AsOf({ view }: { view: TeamsView }) {
  const { f } = await dashboardI18n();
  if (!view.readable || !view.freshness.asOf) return null;
  return (
    <p className="text-sm text-slate-500" data-testid="teams-as-of">
      As of {f.dateTime(view.freshness.asOf)}
    </p>
  );
}

/** What the operator can do here about names, in one sentence per state. */
function WriteNote({ view, paused }: { view: TeamsView; paused: boolean }) {
  if (view.write === "off") return null;
  if (paused) {
    return (
      <p className="text-sm text-slate-600" data-testid="teams-write-state" data-state="paused">
        Renaming is paused until you approve the app&rsquo;s new access (see the banner above).
      </p>
    );
  }
  if (view.write === "not_granted") {
    return (
      <p className="rounded-md border border-sky-200 bg-sky-50 p-3 text-sm text-sky-900" data-testid="teams-write-state" data-state="not_granted">
        This app can rename your teams once you allow it to change them (the permission <span className="font-mono">teams:write</span>).
        When the app&rsquo;s provider asks for it, a banner at the top of this dashboard lets you review and approve it.
      </p>
    );
  }
  return (
    <p className="text-sm text-slate-600" data-testid="teams-write-state" data-state="granted">
      You allowed this app to change your teams: rename one below. The new name is saved at the service.
    </p>
  );
}

async function TeamList({ view, paused }: { view: TeamsView; paused: boolean }) {
  const { f } = await dashboardI18n();
  if (!view.readable) {
    return (
      <p className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-600" data-testid="teams-empty" data-state="not_granted">
        You have not allowed this app to see your teams, so none are shown.
      </p>
    );
  }
  if (!view.freshness.asOf && view.teams.length === 0) {
    return (
      <p className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-600" data-testid="teams-empty" data-state="copying">
        Your teams are being copied from the service. They appear here when the first copy is complete; this usually takes a few minutes
        after you connect the app.
      </p>
    );
  }
  if (view.teams.length === 0) {
    return (
      <p className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-600" data-testid="teams-empty" data-state="none">
        You have no teams at the service.
      </p>
    );
  }
  return (
    <ul className="divide-y divide-slate-100 rounded-lg border border-slate-200 bg-white" data-testid="teams">
      {view.teams.map((team) => (
        <li key={team.id} className="space-y-2 p-4" data-team-id={team.id}>
          <div className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-1">
            <span className="font-medium break-words" data-testid="team-name">
              {team.name ?? `Team ${team.id}`}
            </span>
            <span className="text-sm text-slate-500">
              {team.type ? (TEAM_TYPES[team.type] ?? team.type) : "Type not given"}
              {/* The team's own date at the service, not the day the app copied it (lib/dashboard/teams.ts, teamChangedAt). */}
              {team.updatedAt ? (
                <span className="hidden sm:inline" data-testid="team-changed">
                  {" "}
                  · changed {f.date(team.updatedAt)}
                </span>
              ) : null}
            </span>
          </div>
          {view.write === "granted" && !paused ? <RenameTeamForm teamId={team.id} currentName={team.name ?? ""} /> : null}
        </li>
      ))}
    </ul>
  );
}
