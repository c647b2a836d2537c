// GET|POST /api/cron/keep-alive: the keep-alive job, for platform schedulers (lib/jobs/keep-alive.ts).
import { NextResponse } from "next/server";
import { authorizeCronRequest } from "@/lib/jobs/cron-auth";
import { runKeepAlive } from "@/lib/jobs/keep-alive";
import { logger } from "@/lib/log";

export const dynamic = "force-dynamic";

async function handle(request: Request): Promise<NextResponse> {
  const auth = authorizeCronRequest(request.headers.get("authorization"));
  if (auth === "not_configured") return NextResponse.json({ status: "cron_not_configured" }, { status: 503 });
  if (auth === "denied") return NextResponse.json({ status: "unauthorized" }, { status: 401 });
  try {
    return NextResponse.json(await runKeepAlive());
  } catch (error) {
    logger.error({ err: error }, "keep-alive run failed");
    return NextResponse.json({ status: "unavailable" }, { status: 503 });
  }
}

export { handle as GET, handle as POST };
