// The Teams page's write in a process of its own, for a test that needs other variables than the
// test stack's (DASHBOARD_MANAGE_TEAMS is read once per process):
//   node --conditions=react-server --import tsx app/dashboard/teams/_tests/rename-worker.ts <installRowId> <teamId> <name>
// Prints the outcome as one JSON line (tests/helpers/app-process.ts resultOf). In the section's
// folder, so that removing the section removes it.
import { renameTeamForInstall } from "../../../../lib/dashboard/teams";

const [installRowId = "", teamId = "", name = ""] = process.argv.slice(2);
console.log(JSON.stringify(await renameTeamForInstall(installRowId, { teamId, name })));
process.exit(0);
