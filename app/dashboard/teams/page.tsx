// /dashboard/teams: the operator's teams from the install's local copy (lib/dashboard/teams.ts), and,
// when the app's "manage teams" feature is on and the operator granted teams:write, a rename per team.
import type { Metadata } from "next";
import { currentOperator } from "@/lib/auth/operator-session";
import { loadDashboardInstall, showsLocalCopy } from "@/lib/installs/dashboard";
import { loadTeams, type TeamsView } from "@/lib/dashboard/teams";
import { dashboardI18n } from "@/lib/i18n/request";
import { teamsTranslator, type TeamsMessageKey } from "./i18n";
import { RenameTeamForm } from "./rename-team-form";

export async function generateMetadata(): Promise<Metadata> {
  return { title: teamsTranslator((await dashboardI18n()).locale)("teams.title") };
}

export const dynamic = "force-dynamic";

/** public-facts.md "Team": type is private | professional | operator; anything else is shown as given. */
const TEAM_TYPES: Record<string, TeamsMessageKey> = {
  private: "teams.type.private",
  professional: "teams.type.professional",
  operator: "teams.type.operator",
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
  // The section's words in the operator's language (./i18n.ts; lib/i18n/request.ts picks the language).
  const t = teamsTranslator((await dashboardI18n()).locale);

  return (
    <section className="space-y-4" aria-labelledby="teams-heading">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h1 id="teams-heading" className="text-xl font-semibold">
          {t("teams.title")}
        </h1>
        <AsOf view={view} />
      </div>
      <WriteNote view={view} paused={paused} />
      <TeamList view={view} paused={paused} />
    </section>
  );
}

async function AsOf({ view }: { view: TeamsView }) {
  const { f, locale } = await dashboardI18n();
  const t = teamsTranslator(locale);
  if (!view.readable || !view.freshness.asOf) return null;
  return (
    <p className="text-sm text-slate-500" data-testid="teams-as-of">
      {t("teams.asOf", { when: f.dateTime(view.freshness.asOf) })}
    </p>
  );
}

/** What the operator can do here about names, in one sentence per state. */
async function WriteNote({ view, paused }: { view: TeamsView; paused: boolean }) {
  if (view.write === "off") return null;
  const t = teamsTranslator((await dashboardI18n()).locale);
  if (paused) {
    return (
      <p className="text-sm text-slate-600" data-testid="teams-write-state" data-state="paused">
        {t("teams.write.paused")}
      </p>
    );
  }
  if (view.write === "not_granted") {
    // The scope is shown as code: the sentence is split where its placeholder stands.
    const [before, after] = t("teams.write.notGranted", { scope: "\u0000" }).split("\u0000");
    return (
      <p className="rounded-md border border-sky-200 bg-sky-50 p-3 text-sm text-sky-900" data-testid="teams-write-state" data-state="not_granted">
        {before}
        <span className="font-mono">teams:write</span>
        {after}
      </p>
    );
  }
  return (
    <p className="text-sm text-slate-600" data-testid="teams-write-state" data-state="granted">
      {t("teams.write.granted")}
    </p>
  );
}

async function TeamList({ view, paused }: { view: TeamsView; paused: boolean }) {
  const { f, locale } = await dashboardI18n();
  const t = teamsTranslator(locale);
  if (!view.readable) {
    return (
      <p className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-600" data-testid="teams-empty" data-state="not_granted">
        {t("teams.empty.notGranted")}
      </p>
    );
  }
  if (!view.freshness.asOf && view.teams.length === 0) {
    return (
      <p className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-600" data-testid="teams-empty" data-state="copying">
        {t("teams.empty.copying")}
      </p>
    );
  }
  if (view.teams.length === 0) {
    return (
      <p className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-600" data-testid="teams-empty" data-state="none">
        {t("teams.empty.none")}
      </p>
    );
  }
  return (
    <ul className="divide-y divide-slate-100 rounded-lg border border-slate-200 bg-white" data-testid="teams">
      {view.teams.map((team) => (
        <li key={team.id} className="space-y-2 p-4" data-team-id={team.id}>
          <div className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-1">
            <span className="font-medium break-words" data-testid="team-name">
              {team.name ?? t("teams.unnamed", { id: team.id })}
            </span>
            <span className="text-sm text-slate-500">
              {team.type ? (TEAM_TYPES[team.type] ? t(TEAM_TYPES[team.type]!) : team.type) : t("teams.type.none")}
              {/* The team's own date at the service, not the day the app copied it (lib/dashboard/teams.ts, teamChangedAt). */}
              {team.updatedAt ? (
                <span className="hidden sm:inline" data-testid="team-changed">
                  {" "}
                  · {t("teams.changed", { date: f.date(team.updatedAt) })}
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
