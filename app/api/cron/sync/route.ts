// GET|POST /api/cron/sync: one run of the sync's fan-out and a bounded batch of install syncs, for
// platform schedulers (lib/jobs/cron-route.ts).
import { cronRoute } from "@/lib/jobs/cron-route";

export const dynamic = "force-dynamic";

const handle = cronRoute("sync");
export { handle as GET, handle as POST };
