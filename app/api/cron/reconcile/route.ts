// GET|POST /api/cron/reconcile: one run of the reconcile sweep for platform schedulers (lib/jobs/cron-route.ts).
import { cronRoute } from "@/lib/jobs/cron-route";

export const dynamic = "force-dynamic";

const handle = cronRoute("reconcile");
export { handle as GET, handle as POST };
