// GET|POST /api/cron/retention: one run of the retention purge (revoked installs' synced data after
// SYNC_RETENTION_DAYS), for platform schedulers (lib/jobs/cron-route.ts).
import { cronRoute } from "@/lib/jobs/cron-route";

export const dynamic = "force-dynamic";

const handle = cronRoute("retention");
export { handle as GET, handle as POST };
