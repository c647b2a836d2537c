// GET|POST /api/cron/<kind>: one run of a scheduled job (a kind of lib/jobs/kinds.ts: keep-alive,
// reconcile, sync, retention) for platform schedulers (lib/jobs/cron-route.ts). /api/cron/alerts has
// a route of its own, which Next.js matches before this one.
import { handleCronRequest } from "@/lib/jobs/cron-route";

export const dynamic = "force-dynamic";

export { handleCronRequest as GET, handleCronRequest as POST };
