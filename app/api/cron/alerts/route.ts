// GET|POST /api/cron/alerts: delivers the queued alerts, for hosts without a worker (lib/alerts/,
// lib/jobs/engine.ts deliverQueuedAlerts). Schedule it every minute or so beside the other cron routes.
import { NextResponse } from "next/server";
import { env } from "@/lib/env";
import { deliverQueuedAlerts } from "@/lib/jobs/engine";
import { authorizeCronRequest } from "@/lib/jobs/cron-route";
import { logger } from "@/lib/log";

export const dynamic = "force-dynamic";

/** Alerts one call delivers at most: each is one POST of at most HTTP_TIMEOUT_MS, five at a time. */
const MAX_ALERTS_PER_CALL = 100;

async function handle(request: Request): Promise<NextResponse> {
  const auth = authorizeCronRequest(request.headers.get("authorization"));
  if (auth === "not_configured") return NextResponse.json({ status: "cron_not_configured" }, { status: 503 });
  if (auth === "denied") return NextResponse.json({ status: "unauthorized" }, { status: 401 });
  try {
    return NextResponse.json(await deliverQueuedAlerts({ maxJobs: MAX_ALERTS_PER_CALL, timeLimitMs: env().CRON_TIME_LIMIT_SECONDS * 1000 }));
  } catch (error) {
    logger.error({ err: error }, "alert delivery run failed");
    return NextResponse.json({ status: "unavailable" }, { status: 503 });
  }
}

export { handle as GET, handle as POST };
