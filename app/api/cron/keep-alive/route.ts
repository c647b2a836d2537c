// GET|POST /api/cron/keep-alive: one keep-alive run for platform schedulers (lib/jobs/cron-route.ts).
import { cronRoute } from "@/lib/jobs/cron-route";

export const dynamic = "force-dynamic";

const handle = cronRoute("keep-alive");
export { handle as GET, handle as POST };
