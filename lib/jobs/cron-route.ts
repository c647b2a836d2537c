// One route handler for every /api/cron/* job: checks the scheduler's bearer secret, runs the job,
// answers with its summary. Platform schedulers (Vercel Cron, Cloud Scheduler, a Kubernetes CronJob
// with curl) send `Authorization: Bearer <CRON_SECRET>`.
import "server-only";
import { createHash, timingSafeEqual } from "node:crypto";
import { NextResponse } from "next/server";
import { env } from "@/lib/env";
import { logger } from "@/lib/log";

export type CronAuth = "ok" | "not_configured" | "denied";

export function authorizeCronRequest(authorizationHeader: string | null): CronAuth {
  const secret = env().CRON_SECRET;
  if (!secret) return "not_configured";
  const presented = /^Bearer (.+)$/.exec(authorizationHeader ?? "")?.[1] ?? "";
  // Compare digests: equal lengths for timingSafeEqual, whatever was presented.
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(presented), digest(secret)) ? "ok" : "denied";
}

export function cronRoute(jobName: string, job: () => Promise<unknown>) {
  return async function handle(request: Request): Promise<NextResponse> {
    const auth = authorizeCronRequest(request.headers.get("authorization"));
    if (auth === "not_configured") return NextResponse.json({ status: "cron_not_configured" }, { status: 503 });
    if (auth === "denied") return NextResponse.json({ status: "unauthorized" }, { status: 401 });
    try {
      return NextResponse.json(await job());
    } catch (error) {
      logger.error({ err: error, job: jobName }, "cron job failed");
      return NextResponse.json({ status: "unavailable" }, { status: 503 });
    }
  };
}
