// GET|POST /api/cron/keep-alive: the keep-alive job, for platform schedulers (lib/jobs/keep-alive.ts).
import { cronRoute } from "@/lib/jobs/cron-route";
import { runKeepAlive } from "@/lib/jobs/keep-alive";

export const dynamic = "force-dynamic";

const handle = cronRoute("keep-alive", () => runKeepAlive());
export { handle as GET, handle as POST };
