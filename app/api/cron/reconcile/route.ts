// GET|POST /api/cron/reconcile: the reconcile sweep, for platform schedulers (lib/jobs/reconcile-sweep.ts).
import { cronRoute } from "@/lib/jobs/cron-route";
import { runReconcileSweep } from "@/lib/jobs/reconcile-sweep";

export const dynamic = "force-dynamic";

const handle = cronRoute("reconcile sweep", () => runReconcileSweep());
export { handle as GET, handle as POST };
